/* Writes OTF2 traces for the OTF2 adapter's tests, with the OTF2 library itself.
 *
 *   make_trace DIR small          two ranks: regions (one named with a quote, one
 *                                 with attributes), a send and its receive, nonblocking
 *                                 ones, a collective, metrics of one and two members, a
 *                                 send to a rank that is no location, a location name
 *                                 holding a line break
 *   make_trace DIR ring N ROUNDS  N ranks passing a message round a ring ROUNDS times
 *                                 (tag: the round, 64 bytes times the rank plus one),
 *                                 waiting in MPI_Recv, counting instructions
 *   make_trace DIR from FILE      the events FILE lists, one a line, the ranks in turn and
 *                                 each rank's in time order (times in ticks):
 *                                   ranks N               first: how many ranks
 *                                   E RANK TIME REGION    enters compute, MPI_Send,
 *                                   L RANK TIME REGION    ... leaves MPI_Recv or MPI_Barrier
 *                                   S RANK TIME TO TAG BYTES      a send
 *                                   R RANK TIME FROM TAG BYTES    a receive
 *                                   M RANK TIME VALUE     PAPI_TOT_INS since the last one
 *
 * The archive is DIR/run.otf2 (with DIR/run.def and DIR/run/; from a FILE, DIR/ring.otf2).
 * Clock: 1,000,000 ticks a second, global offset 500 (from a FILE, 0). Every event has a time of its own, so that the order the
 * library's global reader gives is the order of time alone. */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final) {
    (void)user; (void)type; (void)location; (void)caller; (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location) {
    (void)user; (void)type; (void)location;
    return 0;
}

static OTF2_FlushCallbacks flush_callbacks = {
    .otf2_pre_flush = pre_flush,
    .otf2_post_flush = post_flush,
};

enum {
    S_EMPTY, S_MAIN, S_SEND, S_RECV, S_COMPUTE, S_QUOTED, S_NODE, S_MACHINE, S_WORLD,
    S_INS, S_MEM, S_MIB, S_BCAST, S_BARRIER, S_FIRST_NAME
};
enum { R_MAIN, R_SEND, R_RECV, R_COMPUTE, R_QUOTED, R_BCAST, R_BARRIER };

/* Location of rank r: as Score-P numbers them, the rank in the high word for threads. */
static uint64_t location_of(int r) { return (uint64_t)r << 32; }

static void check(OTF2_ErrorCode code, const char *what) {
    if (code != OTF2_SUCCESS) {
        fprintf(stderr, "make_trace: %s: %s\n", what, OTF2_Error_GetName(code));
        exit(1);
    }
}

static void metric(OTF2_EvtWriter *w, OTF2_TimeStamp t, OTF2_MetricRef m, uint64_t ins) {
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue v;
    v.unsigned_int = ins;
    check(OTF2_EvtWriter_Metric(w, NULL, t, m, 1, &type, &v), "metric");
}

static void small(OTF2_Archive *a) {
    for (int r = 0; r < 2; r++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, location_of(r));
        OTF2_TimeStamp t = 1000 + r;
        OTF2_AttributeList *attributes = OTF2_AttributeList_New();
        OTF2_AttributeValue value;
        value.uint32 = 7;
        OTF2_AttributeList_AddAttribute(attributes, 0, OTF2_TYPE_UINT32, value);
        check(OTF2_EvtWriter_Enter(w, attributes, t, R_MAIN), "enter");
        OTF2_AttributeList_Delete(attributes);
        t += 10;
        if (r == 0) {
            OTF2_EvtWriter_Enter(w, NULL, t, R_SEND); t += 10;
            OTF2_EvtWriter_MpiSend(w, NULL, t, 1, 0, 42, 1024); t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_SEND); t += 10;
            /* Rank 9 is no location of the communicator. */
            OTF2_EvtWriter_MpiSend(w, NULL, t, 9, 0, 3, 8); t += 10;
        } else {
            OTF2_EvtWriter_Enter(w, NULL, t, R_RECV); t += 10;
            OTF2_EvtWriter_MpiRecv(w, NULL, t, 0, 0, 42, 1024); t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_RECV); t += 10;
            OTF2_EvtWriter_Enter(w, NULL, t, R_QUOTED); t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_QUOTED); t += 10;
        }
        metric(w, t, 0, 5000 + r); t += 10;
        {
            OTF2_Type types[2] = {OTF2_TYPE_DOUBLE, OTF2_TYPE_INT64};
            OTF2_MetricValue values[2];
            values[0].floating_point = 2.5;
            values[1].signed_int = -3 - r;
            OTF2_EvtWriter_Metric(w, NULL, t, 1, 2, types, values); t += 10;
        }
        OTF2_EvtWriter_MpiIsend(w, NULL, t, 1 - r, 0, 7, 8, 99); t += 10;
        OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, 100); t += 10;
        OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, 99); t += 10;
        OTF2_EvtWriter_MpiIrecv(w, NULL, t, 1 - r, 0, 7, 8, 100); t += 10;
        OTF2_EvtWriter_Enter(w, NULL, t, R_BCAST); t += 10;
        OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t); t += 10;
        OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, OTF2_COLLECTIVE_OP_BCAST, 0, 0, 16, 16);
        t += 10;
        OTF2_EvtWriter_Leave(w, NULL, t, R_BCAST); t += 10;
        OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN);
        check(OTF2_Archive_CloseEvtWriter(a, w), "close events");
    }
}

static void ring(OTF2_Archive *a, int n, int rounds) {
    for (int r = 0; r < n; r++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, location_of(r));
        /* Event k of rank r at 1000 + 10 k + r: no two events at one time. Every rank
         * writes 9 events a round, so round i's send comes before its receive. */
        OTF2_TimeStamp t = 1000 + r;
        OTF2_EvtWriter_Enter(w, NULL, t, R_MAIN); t += 10;
        for (int i = 0; i < rounds; i++) {
            OTF2_EvtWriter_Enter(w, NULL, t, R_COMPUTE); t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_COMPUTE); t += 10;
            OTF2_EvtWriter_Enter(w, NULL, t, R_SEND); t += 10;
            OTF2_EvtWriter_MpiSend(w, NULL, t, (r + 1) % n, 0, i, 64 * (r + 1)); t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_SEND); t += 10;
            OTF2_EvtWriter_Enter(w, NULL, t, R_RECV); t += 10;
            OTF2_EvtWriter_MpiRecv(w, NULL, t, (r + n - 1) % n, 0, i,
                                   64 * ((r + n - 1) % n + 1));
            t += 10;
            OTF2_EvtWriter_Leave(w, NULL, t, R_RECV); t += 10;
            metric(w, t, 0, 1000 * (uint64_t)(i + 1) + r); t += 10;
        }
        OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN);
        check(OTF2_Archive_CloseEvtWriter(a, w), "close events");
    }
}

static int region_named(const char *name) {
    if (strcmp(name, "compute") == 0) return R_COMPUTE;
    if (strcmp(name, "MPI_Send") == 0) return R_SEND;
    if (strcmp(name, "MPI_Recv") == 0) return R_RECV;
    if (strcmp(name, "MPI_Barrier") == 0) return R_BARRIER;
    fprintf(stderr, "make_trace: no region %s\n", name);
    exit(2);
}

/* The events of `in` (see the usage above), after its `ranks N` line. */
static void from(OTF2_Archive *a, FILE *in, int n) {
    char line[256], kind[8], name[64];
    OTF2_EvtWriter *w = NULL;
    int current = -1;
    while (fgets(line, sizeof line, in)) {
        int rank;
        unsigned long long t;
        if (sscanf(line, "%7s %d %llu", kind, &rank, &t) != 3 || rank < 0 || rank >= n ||
            rank < current) {
            fprintf(stderr, "make_trace: bad line: %s", line);
            exit(2);
        }
        if (rank != current) {
            if (w) {
                check(OTF2_Archive_CloseEvtWriter(a, w), "close events");
            }
            w = OTF2_Archive_GetEvtWriter(a, location_of(rank));
            current = rank;
        }
        int peer, tag;
        unsigned long long bytes;
        switch (kind[0]) {
        case 'E':
        case 'L':
            if (sscanf(line, "%*s %*d %*u %63s", name) != 1) {
                fprintf(stderr, "make_trace: bad line: %s", line);
                exit(2);
            }
            if (kind[0] == 'E') {
                check(OTF2_EvtWriter_Enter(w, NULL, t, region_named(name)), "enter");
            } else {
                check(OTF2_EvtWriter_Leave(w, NULL, t, region_named(name)), "leave");
            }
            break;
        case 'S':
        case 'R':
            if (sscanf(line, "%*s %*d %*u %d %d %llu", &peer, &tag, &bytes) != 3) {
                fprintf(stderr, "make_trace: bad line: %s", line);
                exit(2);
            }
            if (kind[0] == 'S') {
                check(OTF2_EvtWriter_MpiSend(w, NULL, t, peer, 0, tag, bytes), "send");
            } else {
                check(OTF2_EvtWriter_MpiRecv(w, NULL, t, peer, 0, tag, bytes), "receive");
            }
            break;
        case 'M':
            if (sscanf(line, "%*s %*d %*u %llu", &bytes) != 1) {
                fprintf(stderr, "make_trace: bad line: %s", line);
                exit(2);
            }
            metric(w, t, 0, bytes);
            break;
        default:
            fprintf(stderr, "make_trace: bad line: %s", line);
            exit(2);
        }
    }
    if (w) {
        check(OTF2_Archive_CloseEvtWriter(a, w), "close events");
    }
}

int main(int argc, char **argv) {
    int is_ring = argc >= 5 && strcmp(argv[2], "ring") == 0;
    int is_from = argc >= 4 && strcmp(argv[2], "from") == 0;
    if (argc < 3 || (strcmp(argv[2], "small") != 0 && !is_ring && !is_from)) {
        fprintf(stderr, "usage: make_trace DIR small | ring N ROUNDS | from FILE\n");
        return 2;
    }
    FILE *in = NULL;
    int n = 2;
    if (is_from) {
        in = fopen(argv[3], "r");
        if (!in || fscanf(in, "ranks %d\n", &n) != 1) {
            fprintf(stderr, "make_trace: %s does not begin with `ranks N`\n", argv[3]);
            return 2;
        }
    } else if (is_ring) {
        n = atoi(argv[3]);
    }
    int rounds = is_ring ? atoi(argv[4]) : 0;
    if (n < 2 || n > 1000 || rounds < 0) {
        fprintf(stderr, "make_trace: 2 to 1000 ranks\n");
        return 2;
    }
    OTF2_Archive *a = OTF2_Archive_Open(argv[1], is_from ? "ring" : "run", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                        OTF2_COMPRESSION_NONE);
    if (!a) {
        fprintf(stderr, "make_trace: cannot open the archive\n");
        return 1;
    }
    check(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "collective callbacks");
    check(OTF2_Archive_OpenEvtFiles(a), "open events");
    if (is_from) {
        from(a, in, n);
        fclose(in);
    } else if (is_ring) {
        ring(a, n, rounds);
    } else {
        small(a);
    }
    check(OTF2_Archive_CloseEvtFiles(a), "close event files");
    check(OTF2_Archive_OpenDefFiles(a), "open definitions");
    for (int r = 0; r < n; r++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(a, location_of(r));
        OTF2_Archive_CloseDefWriter(a, d);
    }
    check(OTF2_Archive_CloseDefFiles(a), "close definition files");

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(a);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000, is_from ? 0 : 500, 100000,
                                              OTF2_UNDEFINED_TIMESTAMP);
    const char *strings[] = {"", "main", "MPI_Send", "MPI_Recv", "compute", "say \"cheese\"",
                             "node", "machine", "MPI_COMM_WORLD", "PAPI_TOT_INS", "mem",
                             "MiB", "MPI_Bcast", "MPI_Barrier"};
    for (int i = 0; i < S_FIRST_NAME; i++) {
        OTF2_GlobalDefWriter_WriteString(g, i, strings[i]);
    }
    /* Each rank's process and thread names: "rank R", "thread R" (rank 1's thread name
     * holds a line break in the small trace). */
    for (int r = 0; r < n; r++) {
        char name[64];
        snprintf(name, sizeof name, "rank %d", r);
        OTF2_GlobalDefWriter_WriteString(g, S_FIRST_NAME + 2 * r, name);
        if (!is_ring && !is_from && r == 1) {
            snprintf(name, sizeof name, "thread\nONE  1");
        } else {
            snprintf(name, sizeof name, "thread %d", r);
        }
        OTF2_GlobalDefWriter_WriteString(g, S_FIRST_NAME + 2 * r + 1, name);
    }
    OTF2_GlobalDefWriter_WriteAttribute(g, 0, S_NODE, S_NODE, OTF2_TYPE_UINT32);
    OTF2_GlobalDefWriter_WriteRegion(g, R_MAIN, S_MAIN, S_MAIN, S_EMPTY, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_SEND, S_SEND, S_SEND, S_EMPTY,
                                     OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_RECV, S_RECV, S_RECV, S_EMPTY,
                                     OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_COMPUTE, S_COMPUTE, S_COMPUTE, S_EMPTY,
                                     OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_QUOTED, S_QUOTED, S_QUOTED, S_EMPTY,
                                     OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_BCAST, S_BCAST, S_BCAST, S_EMPTY,
                                     OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteRegion(g, R_BARRIER, S_BARRIER, S_BARRIER, S_EMPTY,
                                     OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0);
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, S_MACHINE, S_NODE,
                                             OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (int r = 0; r < n; r++) {
        OTF2_GlobalDefWriter_WriteLocationGroup(g, r, S_FIRST_NAME + 2 * r,
                                                OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                OTF2_UNDEFINED_LOCATION_GROUP);
    }
    for (int r = 0; r < n; r++) {
        OTF2_GlobalDefWriter_WriteLocation(g, location_of(r), S_FIRST_NAME + 2 * r + 1,
                                           OTF2_LOCATION_TYPE_CPU_THREAD, 0, r);
    }
    uint64_t *members = calloc(n, sizeof *members);
    for (int r = 0; r < n; r++) {
        members[r] = location_of(r);
    }
    OTF2_GlobalDefWriter_WriteGroup(g, 0, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members);
    for (int r = 0; r < n; r++) {
        members[r] = r;
    }
    OTF2_GlobalDefWriter_WriteGroup(g, 1, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members);
    free(members);
    OTF2_GlobalDefWriter_WriteComm(g, 0, S_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    OTF2_GlobalDefWriter_WriteMetricMember(g, 0, S_INS, S_INS, OTF2_METRIC_TYPE_PAPI,
                                           OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                           OTF2_BASE_DECIMAL, 0, S_EMPTY);
    OTF2_GlobalDefWriter_WriteMetricMember(g, 1, S_MEM, S_MEM, OTF2_METRIC_TYPE_OTHER,
                                           OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE,
                                           OTF2_BASE_BINARY, 20, S_MIB);
    OTF2_GlobalDefWriter_WriteMetricMember(g, 2, S_NODE, S_NODE, OTF2_METRIC_TYPE_OTHER,
                                           OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64,
                                           OTF2_BASE_DECIMAL, 0, S_EMPTY);
    OTF2_MetricMemberRef ins[1] = {0}, two[2] = {1, 2};
    OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, ins, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                          OTF2_RECORDER_KIND_CPU);
    OTF2_GlobalDefWriter_WriteMetricClass(g, 1, 2, two, OTF2_METRIC_ASYNCHRONOUS,
                                          OTF2_RECORDER_KIND_ABSTRACT);
    check(OTF2_Archive_CloseGlobalDefWriter(a, g), "close global definitions");
    check(OTF2_Archive_Close(a), "close archive");
    return 0;
}
