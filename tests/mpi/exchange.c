/* exchange.c: a small MPI program for the tests of the PMPI library (tests/mpi.rs). Every
 * rank passes numbers round a ring each round, by blocking sends and receives, by
 * nonblocking ones completed by MPI_Waitall, MPI_Wait, MPI_Waitany and MPI_Test, then by
 * MPI_Waitsome, MPI_Testall, MPI_Testany or MPI_Testsome (one of them each round, with or
 * without statuses), and by MPI_Sendrecv with its neighbour, then joins a broadcast and an
 * all-reduce; at the end a
 * reduction and a barrier. Rank 0 prints a checksum of everything received, and the
 * numbers of point-to-point sends, receives, collectives and waits all ranks made, which
 * the test compares with what the visual object counted.
 *
 *   exchange [ROUNDS]   (default 20) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long long sends, receives, collectives, waits;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long sum = 0;
    int out[64], in[64];
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 64; k++) {
            out[k] = rank * 1000 + i * 10 + k;
        }
        /* Blocking, round the ring: even ranks send first. */
        if (rank % 2 == 0) {
            MPI_Send(out, 8 + i % 8, MPI_INT, right, i, MPI_COMM_WORLD);
            MPI_Recv(in, 64, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(out, 8 + i % 8, MPI_INT, right, i, MPI_COMM_WORLD);
        }
        sends++, receives++;
        sum += in[0];
        /* Nonblocking, the other way round, completed together. */
        MPI_Request reqs[2];
        MPI_Irecv(in, 64, MPI_INT, right, 100 + i, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, 16, MPI_INT, left, 100 + i, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        sends++, receives++, waits++;
        sum += in[1];
        /* One at a time: a wait for the send, any for the receive, or tests. */
        MPI_Request r, s;
        MPI_Irecv(in, 64, MPI_INT, MPI_ANY_SOURCE, 200 + i, MPI_COMM_WORLD, &r);
        MPI_Isend(out, 4, MPI_INT, right, 200 + i, MPI_COMM_WORLD, &s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        waits++;
        if (i % 2 == 0) {
            int index;
            MPI_Status status;
            MPI_Waitany(1, &r, &index, &status);
            waits++;
        } else {
            int done = 0;
            while (!done) {
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            }
        }
        sends++, receives++;
        sum += in[2];
        /* A pair completed by the other calls that complete several requests. */
        MPI_Request pair[2];
        MPI_Status statuses[2];
        MPI_Irecv(in, 64, MPI_INT, left, 400 + i, MPI_COMM_WORLD, &pair[0]);
        MPI_Isend(out, 3, MPI_INT, right, 400 + i, MPI_COMM_WORLD, &pair[1]);
        int left_over = 2;
        while (left_over > 0) {
            int count = 0, indices[2], flag = 0, index;
            switch (i % 4) {
            case 0:
                /* One request at a time, so that there are as many waits whatever the
                 * timing (the program's output may not depend on it). */
                for (int k = 1; k >= 0; k--) {
                    MPI_Waitsome(1, &pair[k], &count, indices,
                                 i % 8 == 0 ? MPI_STATUSES_IGNORE : statuses);
                    waits++;
                }
                count = 2;
                break;
            case 1:
                MPI_Testall(2, pair, &flag, i % 8 == 1 ? MPI_STATUSES_IGNORE : statuses);
                count = flag ? left_over : 0;
                break;
            case 2:
                MPI_Testany(2, pair, &index, &flag,
                            i % 8 == 2 ? MPI_STATUS_IGNORE : &statuses[0]);
                count = flag && index != MPI_UNDEFINED ? 1 : 0;
                break;
            default:
                MPI_Testsome(2, pair, &count, indices,
                             i % 8 == 3 ? MPI_STATUSES_IGNORE : statuses);
                break;
            }
            if (count != MPI_UNDEFINED) {
                left_over -= count;
            }
        }
        sends++, receives++;
        sum += in[0] % 5;
        /* With a neighbour, both ways at once. */
        MPI_Sendrecv(out, 2, MPI_INT, rank ^ 1, 300 + i, in, 64, MPI_INT, rank ^ 1, 300 + i,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sends++, receives++;
        sum += in[3];
        /* Collectives. */
        int root_value = rank == i % size ? i : -1;
        MPI_Bcast(&root_value, 1, MPI_INT, i % size, MPI_COMM_WORLD);
        long long mine = sum, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        collectives += 2;
        sum += root_value + all % 7;
    }
    long long counts[5] = {sends, receives, collectives + 2, waits, sum}, totals[5];
    MPI_Reduce(counts, totals, 5, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%d ranks, %d rounds: checksum %lld\n", size, rounds, totals[4]);
        printf("sends %lld receives %lld collectives %lld waits %lld\n", totals[0], totals[1],
               totals[2], totals[3]);
    }
    MPI_Finalize();
    return 0;
}
