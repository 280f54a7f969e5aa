/* voml_pmpi.c: live instrumentation of MPI programs for VOML, through the MPI profiling
 * interface. Loaded with LD_PRELOAD into every rank of an unchanged MPI program, it sends
 * PICL "new"-format records of the program's sends, receives, waits and collectives to a
 * `voml run --listen` socket, one connection per rank, as they happen.
 *
 *   scripts/build-pmpi                    builds target/voml-pmpi/libvoml-pmpi.so
 *   voml run SPEC --listen :7000 --producers 4 &
 *   VOML_LISTEN=tcp://127.0.0.1:7000 LD_PRELOAD=$PWD/target/voml-pmpi/libvoml-pmpi.so \
 *       mpirun -np 4 ./program
 *
 * VOML_LISTEN takes what --listen takes: tcp://HOST:PORT, :PORT (loopback) or unix:PATH.
 * Built with the NATS C client (libnats; scripts/build-pmpi uses it when pkg-config finds
 * it), the library can publish to NATS JetStream instead, for `voml run --nats`:
 * VOML_NATS=nats://HOST:PORT and VOML_SUBJECT=S, each rank publishing on S.rankR. With
 * neither set, the library passes every call through and sends nothing. The records, their codes
 * and their numbers are those of docs/formats.md's layout (MPICL's codes: sends -27,
 * receives -51, blocked receives and waits -52, collectives -402 and -780..-793); see
 * docs/live.md. Times are MPI_Wtime's, from a barrier at MPI_Init, in seconds.
 *
 * Nothing the program prints changes: the library writes to its socket (or NATS) only,
 * and to standard error once if it cannot connect or the socket breaks (then it stops
 * sending and the program goes on). A visual object slower than the program slows it down (the socket's
 * buffer fills): records are never dropped. A paused or slow visual object is waited for however
 * long it takes; a VOML host that stops answering altogether (it vanished from the network, its
 * machine stopped) is given up once what was sent to it went unanswered for VOML_SEND_TIMEOUT
 * seconds (default 30), instead of when TCP gives up (some 15 minutes). */
#include <mpi.h>
#ifdef VOML_WITH_NATS
#include <nats/nats.h>
#include <time.h>
#endif

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* MPICL's event types (tracedefs.h). */
enum {
    SEND = -27,       /* a send begins (any kind of send, blocking or not) */
    RECEIVE = -51,    /* a receive that found its message waiting, or completed later */
    BLOCKED = -52,    /* a receive that waited for its message; a wait */
    RECEIVE_BEGIN = -57, /* a nonblocking receive is posted */
    BARRIER = -402,
    ALLGATHER = -780,
    ALLREDUCE = -782,
    ALLTOALL = -783,
    BCAST = -785,
    GATHER = -786,
    REDUCE = -790,
    REDUCE_SCATTER = -791,
    SCAN = -792,
    SCATTER = -793,
    TRACE = -901, /* the rank's tracing begins (entry) and ends (exit) */
};
enum { ENTRY = -3, EXIT = -4 };
/* MPICL's wildcards in a receive's entry: any tag, any source. */
enum { ANY_TAG = -1, ANY_SOURCE = -2 };

static int sending = 0;      /* whether records are sent (a socket or NATS is open) */
static int sock = -1;        /* the connection to VOML_LISTEN, or -1 */
static int world_rank = 0;
static double t0 = 0.0;      /* MPI_Wtime at the barrier in MPI_Init */
static double last_flush = 0.0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char buf[1 << 16];
static size_t used = 0;

/* How long what was sent may go unanswered before the host is given up (VOML_SEND_TIMEOUT,
 * seconds), and how often a send that waits looks (a timeout on the socket, seconds). */
static long send_timeout_ms = 30000;
#define LOOK_EVERY 1
/* Looks in a row that found the host silent. */
static int silent_looks = 0;

/* Flushed at least this often (seconds of MPI_Wtime), so that a live view follows. */
#define FLUSH_EVERY 0.05

/* One line to standard error, written whole in one write: the ranks share the stream, and a
 * line written in pieces could be cut by another rank's. */
static void say(const char *fmt, ...) {
    char line[1024];
    int n = snprintf(line, sizeof line - 1, "voml-pmpi (rank %d): ", world_rank);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - 1 - (size_t)n, fmt, ap);
    va_end(ap);
    if (m > 0) n += m;
    if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    fflush(stderr);
    (void)!write(2, line, (size_t)n);
}

#ifdef VOML_WITH_NATS
/* NATS JetStream: the connection, its JetStream context, this rank's subject, and the
 * messages it has published (their ids are RANK-N, so that the server keeps one copy of a
 * message sent again). */
static natsConnection *nc = NULL;
static jsCtx *js = NULL;
static char nats_subject[300];
static long long published = 0;

/* Longest a message is sent again while the server does not store it (seconds). */
#define NATS_PATIENCE 60

/* Publishes `len` bytes (or, with `end`, the rank's end) until the server has stored it;
 * says why and gives 0 after NATS_PATIENCE seconds. */
static int nats_publish(const char *data, int len, int end) {
    char id[64];
    if (end) {
        snprintf(id, sizeof id, "rank%d-end", world_rank);
    } else {
        snprintf(id, sizeof id, "rank%d-%lld", world_rank, ++published);
    }
    time_t started = time(NULL);
    for (;;) {
        natsMsg *msg = NULL;
        natsStatus s = natsMsg_Create(&msg, nats_subject, NULL, data, len);
        if (s == NATS_OK && end) {
            /* The end says how many messages came before it: a visual object ends the rank
             * once it has taken them all, whatever order they arrive in. */
            char before[32];
            snprintf(before, sizeof before, "%lld", published);
            s = natsMsgHeader_Set(msg, "Voml-End", before);
        }
        jsPubOptions opts;
        jsPubOptions_Init(&opts);
        opts.MsgId = id;
        opts.MaxWait = 2000;
        jsPubAck *ack = NULL;
        jsErrCode code = 0;
        if (s == NATS_OK) {
            s = js_PublishMsg(&ack, js, msg, &opts, &code);
        }
        jsPubAck_Destroy(ack);
        natsMsg_Destroy(msg);
        if (s == NATS_OK) {
            return 1;
        }
        if (time(NULL) - started > NATS_PATIENCE) {
            say("the NATS server did not store the records of %s for %d s (%s); records are "
                "no longer sent", nats_subject, NATS_PATIENCE, natsStatus_GetText(s));
            return 0;
        }
        nats_Sleep(100);
    }
}

static void nats_stop(void) {
    jsCtx_Destroy(js);
    js = NULL;
    natsConnection_Destroy(nc);
    nc = NULL;
}
#endif

/* Whether the host behind the socket stopped answering: data (or, while its window is shut,
 * window probes) went out and no acknowledgement came back for send_timeout_ms, at two looks
 * in a row (a host that answers answers a probe within a round trip; one paused for long is
 * probed rarely, and answers). A Unix socket's peer is never silent this way. */
static int host_silent(void) {
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(sock, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) {
        return 0;
    }
    int waiting = info.tcpi_retransmits > 0 || info.tcpi_probes > 0;
    if (waiting && (long)info.tcpi_last_ack_recv >= send_timeout_ms) {
        silent_looks++;
    } else {
        silent_looks = 0;
    }
    return silent_looks >= 2;
}

/* Writes the buffer out; on a broken socket (or a NATS server that does not store it) says
 * so once and stops sending. Called with the lock held. */
static void flush_locked(void) {
#ifdef VOML_WITH_NATS
    if (js) {
        if (used > 0 && !nats_publish(buf, (int)used, 0)) {
            nats_stop();
            sending = 0;
        }
        used = 0;
        return;
    }
#endif
    size_t off = 0;
    while (sock >= 0 && off < used) {
        ssize_t n = send(sock, buf + off, used - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The socket's buffer stayed full for LOOK_EVERY: a slow host, or none. */
            if (!host_silent()) {
                continue;
            }
            say("the VOML host has not answered for %ld s; records are no longer sent "
                "(VOML_SEND_TIMEOUT sets how long to wait)", send_timeout_ms / 1000);
            close(sock);
            sock = -1;
            sending = 0;
            break;
        }
        silent_looks = 0;
        if (n <= 0) {
            say("the VOML socket broke (%s); records are no longer sent", strerror(errno));
            close(sock);
            sock = -1;
            sending = 0;
            break;
        }
        off += (size_t)n;
    }
    used = 0;
}

/* Connects to VOML_LISTEN: tcp://HOST:PORT, :PORT (loopback) or unix:PATH. */
static int connect_to(const char *addr) {
    if (strncmp(addr, "unix:", 5) == 0) {
        const char *path = addr + 5;
        while (*path == '/' && path[1] == '/') {
            path++;
        }
        struct sockaddr_un un;
        memset(&un, 0, sizeof un);
        un.sun_family = AF_UNIX;
        if (strlen(path) >= sizeof un.sun_path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        strcpy(un.sun_path, path);
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (s < 0) {
            return -1;
        }
        if (connect(s, (struct sockaddr *)&un, sizeof un) < 0) {
            int e = errno;
            close(s);
            errno = e;
            return -1;
        }
        return s;
    }
    if (strncmp(addr, "tcp://", 6) == 0) {
        addr += 6;
    }
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon - addr >= (long)sizeof host) {
        errno = EINVAL;
        return -1;
    }
    if (colon == addr) {
        strcpy(host, "127.0.0.1");
    } else if (addr[0] == '[' && colon[-1] == ']') {
        memcpy(host, addr + 1, colon - addr - 2);
        host[colon - addr - 2] = 0;
    } else {
        memcpy(host, addr, colon - addr);
        host[colon - addr] = 0;
    }
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    int err = getaddrinfo(host, colon + 1, &hints, &found);
    if (err != 0) {
        say("cannot resolve `%s`: %s", addr, gai_strerror(err));
        errno = EINVAL;
        return -1;
    }
    int s = -1;
    for (struct addrinfo *a = found; a; a = a->ai_next) {
        s = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (s < 0) {
            continue;
        }
        if (connect(s, a->ai_addr, a->ai_addrlen) == 0) {
            break;
        }
        int e = errno;
        close(s);
        s = -1;
        errno = e;
    }
    freeaddrinfo(found);
    return s;
}

static double now(void) { return PMPI_Wtime() - t0; }

/* One record: rtype etype time processor process ndata descriptor, then the three numbers
 * (bytes, tag, partner, or what stands in their place) and a name, as docs/formats.md lays
 * them out. */
static void record_at(double t, int rtype, int etype, int n, const long long *numbers,
                      const char *name) {
    if (!sending) {
        return;
    }
    pthread_mutex_lock(&lock);
    if (sending) {
        if (used > sizeof buf - 512) {
            flush_locked();
        }
        char descriptor[16] = "";
        for (int i = 0; i < n && i < 3; i++) {
            strcat(descriptor, "%d");
        }
        strcat(descriptor, "%s");
        int w = snprintf(buf + used, sizeof buf - used, "%d %d %.9f %d 0 %d \"%s\"", rtype,
                         etype, t, world_rank, n + 1, descriptor);
        used += (size_t)w;
        for (int i = 0; i < n && i < 3; i++) {
            used += (size_t)snprintf(buf + used, sizeof buf - used, " %lld", numbers[i]);
        }
        used += (size_t)snprintf(buf + used, sizeof buf - used, " \"%s\"\n", name);
        if (t - last_flush >= FLUSH_EVERY) {
            flush_locked();
            last_flush = t;
        }
    }
    pthread_mutex_unlock(&lock);
}

static void record3(int rtype, int etype, long long a, long long b, long long c,
                    const char *name) {
    long long numbers[3] = {a, b, c};
    record_at(now(), rtype, etype, 3, numbers, name);
}

/* A rank of `comm` as a rank of MPI_COMM_WORLD (MPI_PROC_NULL and the like as they are). */
static int world_of(MPI_Comm comm, int rank) {
    if (!sending || rank < 0 || comm == MPI_COMM_WORLD || comm == MPI_COMM_NULL) {
        return rank;
    }
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group group, world;
    if (inter) {
        PMPI_Comm_remote_group(comm, &group);
    } else {
        PMPI_Comm_group(comm, &group);
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int out = rank;
    if (PMPI_Group_translate_ranks(group, 1, &rank, world, &out) != MPI_SUCCESS ||
        out == MPI_UNDEFINED) {
        out = -1;
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    return out;
}

static long long bytes_of(int count, MPI_Datatype type) {
    int size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) {
        return 0;
    }
    return (long long)count * size;
}

/* ---- Receives posted and not yet completed, keyed by their request. ---- */

struct pending {
    MPI_Request request;
    MPI_Comm comm;
    int used;
};
static struct pending *pending = NULL;
static size_t pending_cap = 0, pending_len = 0;

static uint64_t key_of(MPI_Request r) {
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    return k ^ (k >> 32);
}

static void pending_put(MPI_Request r, MPI_Comm comm);

static void pending_grow(void) {
    struct pending *old = pending;
    size_t old_cap = pending_cap;
    pending_cap = pending_cap ? pending_cap * 2 : 256;
    pending = calloc(pending_cap, sizeof *pending);
    pending_len = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].used) {
            pending_put(old[i].request, old[i].comm);
        }
    }
    free(old);
}

static void pending_put(MPI_Request r, MPI_Comm comm) {
    if ((pending_len + 1) * 2 > pending_cap) {
        pending_grow();
    }
    size_t i = key_of(r) & (pending_cap - 1);
    while (pending[i].used && memcmp(&pending[i].request, &r, sizeof r) != 0) {
        i = (i + 1) & (pending_cap - 1);
    }
    if (!pending[i].used) {
        pending_len++;
    }
    pending[i].request = r;
    pending[i].comm = comm;
    pending[i].used = 1;
}

/* Takes the receive posted with request `r` out of the table: its communicator, or 0 if
 * `r` is no receive of ours (a send, a persistent or foreign request). */
static int pending_take(MPI_Request r, MPI_Comm *comm) {
    if (!pending_cap || r == MPI_REQUEST_NULL) {
        return 0;
    }
    size_t i = key_of(r) & (pending_cap - 1);
    while (pending[i].used) {
        if (memcmp(&pending[i].request, &r, sizeof r) == 0) {
            *comm = pending[i].comm;
            /* Backward-shift deletion keeps every probe sequence whole. */
            size_t hole = i, j = i;
            for (;;) {
                j = (j + 1) & (pending_cap - 1);
                if (!pending[j].used) {
                    break;
                }
                size_t home = key_of(pending[j].request) & (pending_cap - 1);
                if (((j - home) & (pending_cap - 1)) >= ((j - hole) & (pending_cap - 1))) {
                    pending[hole] = pending[j];
                    hole = j;
                }
            }
            pending[hole].used = 0;
            pending_len--;
            return 1;
        }
        i = (i + 1) & (pending_cap - 1);
    }
    return 0;
}

/* A receive completed with `status`: its entry and exit (bytes, tag, source). */
static void received(int etype, MPI_Comm comm, const MPI_Status *status, const char *name) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled || status->MPI_SOURCE == MPI_PROC_NULL) {
        return;
    }
    int count = 0;
    PMPI_Get_count(status, MPI_BYTE, &count);
    if (count == MPI_UNDEFINED) {
        count = 0;
    }
    long long numbers[3] = {count, status->MPI_TAG, world_of(comm, status->MPI_SOURCE)};
    double t = now();
    record_at(t, ENTRY, etype, 3, numbers, name);
    record_at(t, EXIT, etype, 3, numbers, name);
}

/* Requests `reqs` (copied before the call) completed with `statuses`: the receives among
 * them, as received now. `which` lists the `nwhich` requests that completed, whose statuses
 * are `statuses[0..nwhich]` (NULL: all `n` did, request i with `statuses[i]`). */
static void completed(int n, const MPI_Request *reqs, const MPI_Status *statuses,
                      const int *which, int nwhich) {
    if (!sending) {
        return;
    }
    for (int k = 0; k < (which ? nwhich : n); k++) {
        int i = which ? which[k] : k;
        MPI_Comm comm;
        pthread_mutex_lock(&lock);
        int ours = pending_take(reqs[i], &comm);
        pthread_mutex_unlock(&lock);
        if (ours) {
            received(RECEIVE, comm, &statuses[which ? k : i], "MPI_Irecv");
        }
    }
}

/* ---- Setting up and ending. ---- */

#ifdef VOML_WITH_NATS
/* Whether `subject` can name a run: dot-separated words of letters, digits, `-`, `_`. */
static int good_subject(const char *subject) {
    int word = 0;
    for (const char *c = subject; *c; c++) {
        if (*c == '.') {
            if (!word) {
                return 0;
            }
            word = 0;
        } else if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                   (*c >= '0' && *c <= '9') || *c == '-' || *c == '_') {
            word = 1;
        } else {
            return 0;
        }
    }
    return word && strlen(subject) < 200;
}

/* Connects to the NATS server `url` and opens the run's stream (as `voml run --nats` and
 * `voml send --nats` do: VOML_ and the subject with `_` for its dots, holding SUBJECT.>, in
 * files); this rank publishes on SUBJECT.rankR. */
static int nats_start(const char *url, const char *subject) {
    if (!subject || !good_subject(subject)) {
        say("VOML_NATS needs VOML_SUBJECT, the run's subject (dot-separated words of letters, "
            "digits, `-` and `_`); records are not sent");
        return 0;
    }
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, url);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 10000);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
    if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
    natsOptions_Destroy(opts);
    if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK) {
        say("cannot connect to the NATS server at VOML_NATS=%s (%s); records are not sent", url,
            natsStatus_GetText(s));
        nats_stop();
        return 0;
    }
    char name[256], all[256], description[300];
    snprintf(name, sizeof name, "VOML_%s", subject);
    for (char *c = name; *c; c++) {
        if (*c == '.') {
            *c = '_';
        }
    }
    snprintf(all, sizeof all, "%s.>", subject);
    snprintf(description, sizeof description, "VOML records published on %s", all);
    const char *subjects[1] = {all};
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = name;
    config.Description = description;
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    jsStreamInfo *info = NULL;
    jsErrCode code = 0;
    /* An error here is most often that the stream is there already: publishing says if
     * it is not. */
    js_AddStream(&info, js, &config, NULL, &code);
    jsStreamInfo_Destroy(info);
    snprintf(nats_subject, sizeof nats_subject, "%s.rank%d", subject, world_rank);
    /* A rank of an earlier run on this subject has published here: this run's messages
     * would be numbered as its were, and a visual object would take them for copies. */
    natsMsg *last = NULL;
    if (js_GetLastMsg(&last, js, name, nats_subject, NULL, NULL) == NATS_OK) {
        natsMsg_Destroy(last);
        say("a rank of an earlier run has published on %s already (the stream %s holds its "
            "messages); records are not sent: use a new VOML_SUBJECT for a new run",
            nats_subject, name);
        nats_stop();
        return 0;
    }
    return 1;
}
#endif

static void start(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    const char *addr = getenv("VOML_LISTEN");
    const char *nats = getenv("VOML_NATS");
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = PMPI_Wtime();
    if (nats && *nats) {
#ifdef VOML_WITH_NATS
        if (!nats_start(nats, getenv("VOML_SUBJECT"))) {
            return;
        }
        sending = 1;
        record3(ENTRY, TRACE, 0, -1, -1, "MPI_Init");
#else
        say("this library was built without the NATS client (libnats): VOML_NATS is ignored; "
            "records are not sent");
#endif
        return;
    }
    if (!addr || !*addr) {
        return;
    }
    int s = connect_to(addr);
    if (s < 0) {
        say("cannot connect to VOML_LISTEN=%s (%s); records are not sent", addr,
            strerror(errno));
        return;
    }
    const char *timeout = getenv("VOML_SEND_TIMEOUT");
    if (timeout && *timeout) {
        char *end;
        double seconds = strtod(timeout, &end);
        if (*end || !(seconds > 0) || seconds > 86400 * 365) {
            say("VOML_SEND_TIMEOUT=%s is not a number of seconds; 30 is used", timeout);
        } else {
            send_timeout_ms = (long)(seconds * 1000);
        }
    }
    /* A send that waits looks now and then whether the host still answers. */
    struct timeval look = {LOOK_EVERY, 0};
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &look, sizeof look);
    sock = s;
    sending = 1;
    record3(ENTRY, TRACE, 0, -1, -1, "MPI_Init");
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        start();
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        start();
    }
    return rc;
}

int MPI_Finalize(void) {
    record3(EXIT, TRACE, 0, -1, -1, "MPI_Finalize");
    pthread_mutex_lock(&lock);
    flush_locked();
#ifdef VOML_WITH_NATS
    if (js && sending) {
        nats_publish(NULL, 0, 1);
    }
    if (js) {
        nats_stop();
    }
#endif
    if (sock >= 0) {
        shutdown(sock, SHUT_WR);
        close(sock);
        sock = -1;
    }
    sending = 0;
    free(pending);
    pending = NULL;
    pending_cap = pending_len = 0;
    pthread_mutex_unlock(&lock);
    return PMPI_Finalize();
}

/* ---- Point to point. ---- */

#define SEND_WRAPPER(NAME)                                                                 \
    int NAME(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
    {                                                                                      \
        long long bytes = bytes_of(count, type);                                           \
        int to = world_of(comm, dest);                                                     \
        record3(ENTRY, SEND, bytes, tag, to, #NAME);                                       \
        int rc = P##NAME(b, count, type, dest, tag, comm);                                 \
        record3(EXIT, SEND, bytes, tag, to, #NAME);                                        \
        return rc;                                                                         \
    }

SEND_WRAPPER(MPI_Send)
SEND_WRAPPER(MPI_Bsend)
SEND_WRAPPER(MPI_Ssend)
SEND_WRAPPER(MPI_Rsend)

#define ISEND_WRAPPER(NAME)                                                                \
    int NAME(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
             MPI_Request *req) {                                                           \
        long long bytes = bytes_of(count, type);                                           \
        int to = world_of(comm, dest);                                                     \
        record3(ENTRY, SEND, bytes, tag, to, #NAME);                                       \
        int rc = P##NAME(b, count, type, dest, tag, comm, req);                            \
        record3(EXIT, SEND, bytes, tag, to, #NAME);                                        \
        return rc;                                                                         \
    }

ISEND_WRAPPER(MPI_Isend)
ISEND_WRAPPER(MPI_Ibsend)
ISEND_WRAPPER(MPI_Issend)
ISEND_WRAPPER(MPI_Irsend)

int MPI_Recv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    if (!sending) {
        return PMPI_Recv(b, count, type, source, tag, comm, status);
    }
    /* Whether the message is there already: a receive that finds it does not block. */
    int there = 0;
    MPI_Status probe;
    if (source != MPI_PROC_NULL) {
        PMPI_Iprobe(source, tag, comm, &there, &probe);
    }
    int etype = there ? RECEIVE : BLOCKED;
    long long want[3] = {0, tag == MPI_ANY_TAG ? ANY_TAG : tag,
                         source == MPI_ANY_SOURCE ? ANY_SOURCE : world_of(comm, source)};
    record_at(now(), ENTRY, etype, 3, want, "MPI_Recv");
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    int rc = PMPI_Recv(b, count, type, source, tag, comm, status);
    int got = 0;
    PMPI_Get_count(status, MPI_BYTE, &got);
    long long numbers[3] = {got == MPI_UNDEFINED ? 0 : got, status->MPI_TAG,
                            world_of(comm, status->MPI_SOURCE)};
    record_at(now(), EXIT, etype, 3, numbers, "MPI_Recv");
    return rc;
}

int MPI_Irecv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
    int rc = PMPI_Irecv(b, count, type, source, tag, comm, req);
    if (sending && rc == MPI_SUCCESS) {
        long long want[3] = {0, tag == MPI_ANY_TAG ? ANY_TAG : tag,
                             source == MPI_ANY_SOURCE ? ANY_SOURCE : world_of(comm, source)};
        double t = now();
        record_at(t, ENTRY, RECEIVE_BEGIN, 3, want, "MPI_Irecv");
        record_at(t, EXIT, RECEIVE_BEGIN, 3, want, "MPI_Irecv");
        if (source != MPI_PROC_NULL) {
            pthread_mutex_lock(&lock);
            pending_put(*req, comm);
            pthread_mutex_unlock(&lock);
        }
    }
    return rc;
}

int MPI_Sendrecv(const void *sb, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rb, int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
    if (!sending) {
        return PMPI_Sendrecv(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag,
                             comm, status);
    }
    long long bytes = bytes_of(scount, stype);
    int to = world_of(comm, dest);
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    if (dest != MPI_PROC_NULL) {
        record3(ENTRY, SEND, bytes, stag, to, "MPI_Sendrecv");
    }
    int rc = PMPI_Sendrecv(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag,
                           comm, status);
    if (dest != MPI_PROC_NULL) {
        record3(EXIT, SEND, bytes, stag, to, "MPI_Sendrecv");
    }
    if (source != MPI_PROC_NULL) {
        received(RECEIVE, comm, status, "MPI_Sendrecv");
    }
    return rc;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype type, int dest, int stag,
                         int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    if (!sending) {
        return PMPI_Sendrecv_replace(b, count, type, dest, stag, source, rtag, comm, status);
    }
    long long bytes = bytes_of(count, type);
    int to = world_of(comm, dest);
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    if (dest != MPI_PROC_NULL) {
        record3(ENTRY, SEND, bytes, stag, to, "MPI_Sendrecv_replace");
    }
    int rc = PMPI_Sendrecv_replace(b, count, type, dest, stag, source, rtag, comm, status);
    if (dest != MPI_PROC_NULL) {
        record3(EXIT, SEND, bytes, stag, to, "MPI_Sendrecv_replace");
    }
    if (source != MPI_PROC_NULL) {
        received(RECEIVE, comm, status, "MPI_Sendrecv_replace");
    }
    return rc;
}

/* ---- Waits and tests: a wait is a blocked state; the receives it completes follow. ---- */

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    if (!sending) {
        return PMPI_Wait(req, status);
    }
    MPI_Request r = *req;
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    record3(ENTRY, BLOCKED, 0, -1, -1, "MPI_Wait");
    int rc = PMPI_Wait(req, status);
    record3(EXIT, BLOCKED, 0, -1, -1, "MPI_Wait");
    completed(1, &r, status, NULL, 0);
    return rc;
}

/* Copies of `n` requests (completing a request frees it). */
static MPI_Request *copy_requests(int n, const MPI_Request *reqs) {
    MPI_Request *copy = malloc(sizeof *copy * (n > 0 ? n : 1));
    if (copy) {
        memcpy(copy, reqs, sizeof *copy * (size_t)(n > 0 ? n : 0));
    }
    return copy;
}

/* What a call that completes several requests needs to tell what it completed: copies of
 * the requests, and statuses (the caller's, or ours when it ignores them). */
struct watch {
    MPI_Request *copy;
    MPI_Status *mine;
    MPI_Status *statuses;
};

static void unwatch(struct watch *w) {
    free(w->copy);
    free(w->mine);
    w->copy = NULL;
    w->mine = NULL;
}

/* Prepares `w` for a call completing `n` requests with the caller's `statuses`; false when
 * nothing is sent or memory is short: the call then goes through as the caller made it. */
static int watch(struct watch *w, int n, const MPI_Request *reqs, MPI_Status *statuses) {
    w->copy = sending ? copy_requests(n, reqs) : NULL;
    w->mine = NULL;
    w->statuses = statuses;
    if (w->copy && statuses == MPI_STATUSES_IGNORE) {
        w->mine = malloc(sizeof *w->mine * (n > 0 ? n : 1));
        w->statuses = w->mine;
    }
    if (!w->copy || (!w->statuses && n > 0)) {
        unwatch(w);
        w->statuses = statuses;
        return 0;
    }
    return 1;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    struct watch w;
    if (!watch(&w, n, reqs, statuses)) {
        return PMPI_Waitall(n, reqs, statuses);
    }
    record3(ENTRY, BLOCKED, 0, -1, -1, "MPI_Waitall");
    int rc = PMPI_Waitall(n, reqs, w.statuses);
    record3(EXIT, BLOCKED, 0, -1, -1, "MPI_Waitall");
    completed(n, w.copy, w.statuses, NULL, 0);
    unwatch(&w);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    MPI_Request *copy = sending ? copy_requests(n, reqs) : NULL;
    if (!copy) {
        return PMPI_Waitany(n, reqs, index, status);
    }
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    record3(ENTRY, BLOCKED, 0, -1, -1, "MPI_Waitany");
    int rc = PMPI_Waitany(n, reqs, index, status);
    record3(EXIT, BLOCKED, 0, -1, -1, "MPI_Waitany");
    if (*index != MPI_UNDEFINED) {
        completed(n, copy, status, index, 1);
    }
    free(copy);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    struct watch w;
    if (!watch(&w, n, reqs, statuses)) {
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    }
    record3(ENTRY, BLOCKED, 0, -1, -1, "MPI_Waitsome");
    int rc = PMPI_Waitsome(n, reqs, outcount, indices, w.statuses);
    record3(EXIT, BLOCKED, 0, -1, -1, "MPI_Waitsome");
    if (*outcount != MPI_UNDEFINED) {
        completed(n, w.copy, w.statuses, indices, *outcount);
    }
    unwatch(&w);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    MPI_Request r = *req;
    MPI_Status mine;
    if (sending && status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    int rc = PMPI_Test(req, flag, status);
    if (*flag) {
        completed(1, &r, status, NULL, 0);
    }
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    struct watch w;
    if (!watch(&w, n, reqs, statuses)) {
        return PMPI_Testall(n, reqs, flag, statuses);
    }
    int rc = PMPI_Testall(n, reqs, flag, w.statuses);
    if (*flag) {
        completed(n, w.copy, w.statuses, NULL, 0);
    }
    unwatch(&w);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    MPI_Request *copy = sending ? copy_requests(n, reqs) : NULL;
    if (!copy) {
        return PMPI_Testany(n, reqs, index, flag, status);
    }
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) {
        status = &mine;
    }
    int rc = PMPI_Testany(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED) {
        completed(n, copy, status, index, 1);
    }
    free(copy);
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    struct watch w;
    if (!watch(&w, n, reqs, statuses)) {
        return PMPI_Testsome(n, reqs, outcount, indices, statuses);
    }
    int rc = PMPI_Testsome(n, reqs, outcount, indices, w.statuses);
    if (*outcount != MPI_UNDEFINED) {
        completed(n, w.copy, w.statuses, indices, *outcount);
    }
    unwatch(&w);
    return rc;
}

/* ---- Collectives: entry and exit, with this rank's bytes and the root (or -1). ---- */

static int root_world(MPI_Comm comm, int root) { return world_of(comm, root); }

int MPI_Barrier(MPI_Comm comm) {
    record3(ENTRY, BARRIER, 0, -1, -1, "MPI_Barrier");
    int rc = PMPI_Barrier(comm);
    record3(EXIT, BARRIER, 0, -1, -1, "MPI_Barrier");
    return rc;
}

int MPI_Bcast(void *b, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    long long bytes = bytes_of(count, type);
    int r = root_world(comm, root);
    record3(ENTRY, BCAST, bytes, r, -1, "MPI_Bcast");
    int rc = PMPI_Bcast(b, count, type, root, comm);
    record3(EXIT, BCAST, bytes, r, -1, "MPI_Bcast");
    return rc;
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
    long long bytes = bytes_of(count, type);
    int r = root_world(comm, root);
    record3(ENTRY, REDUCE, bytes, r, -1, "MPI_Reduce");
    int rc = PMPI_Reduce(sb, rb, count, type, op, root, comm);
    record3(EXIT, REDUCE, bytes, r, -1, "MPI_Reduce");
    return rc;
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    long long bytes = bytes_of(count, type);
    record3(ENTRY, ALLREDUCE, bytes, -1, -1, "MPI_Allreduce");
    int rc = PMPI_Allreduce(sb, rb, count, type, op, comm);
    record3(EXIT, ALLREDUCE, bytes, -1, -1, "MPI_Allreduce");
    return rc;
}

int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
    long long bytes = bytes_of(count, type);
    record3(ENTRY, SCAN, bytes, -1, -1, "MPI_Scan");
    int rc = PMPI_Scan(sb, rb, count, type, op, comm);
    record3(EXIT, SCAN, bytes, -1, -1, "MPI_Scan");
    return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int counts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    long long bytes = bytes_of(counts[rank], type);
    record3(ENTRY, REDUCE_SCATTER, bytes, -1, -1, "MPI_Reduce_scatter");
    int rc = PMPI_Reduce_scatter(sb, rb, counts, type, op, comm);
    record3(EXIT, REDUCE_SCATTER, bytes, -1, -1, "MPI_Reduce_scatter");
    return rc;
}

int MPI_Gather(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = sb == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
    int r = root_world(comm, root);
    record3(ENTRY, GATHER, bytes, r, -1, "MPI_Gather");
    int rc = PMPI_Gather(sb, scount, stype, rb, rcount, rtype, root, comm);
    record3(EXIT, GATHER, bytes, r, -1, "MPI_Gather");
    return rc;
}

int MPI_Gatherv(const void *sb, int scount, MPI_Datatype stype, void *rb,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm) {
    long long bytes = sb == MPI_IN_PLACE ? 0 : bytes_of(scount, stype);
    int r = root_world(comm, root);
    record3(ENTRY, GATHER, bytes, r, -1, "MPI_Gatherv");
    int rc = PMPI_Gatherv(sb, scount, stype, rb, rcounts, displs, rtype, root, comm);
    record3(EXIT, GATHER, bytes, r, -1, "MPI_Gatherv");
    return rc;
}

int MPI_Scatter(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = rb == MPI_IN_PLACE ? bytes_of(scount, stype) : bytes_of(rcount, rtype);
    int r = root_world(comm, root);
    record3(ENTRY, SCATTER, bytes, r, -1, "MPI_Scatter");
    int rc = PMPI_Scatter(sb, scount, stype, rb, rcount, rtype, root, comm);
    record3(EXIT, SCATTER, bytes, r, -1, "MPI_Scatter");
    return rc;
}

int MPI_Scatterv(const void *sb, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rb, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = rb == MPI_IN_PLACE ? 0 : bytes_of(rcount, rtype);
    int r = root_world(comm, root);
    record3(ENTRY, SCATTER, bytes, r, -1, "MPI_Scatterv");
    int rc = PMPI_Scatterv(sb, scounts, displs, stype, rb, rcount, rtype, root, comm);
    record3(EXIT, SCATTER, bytes, r, -1, "MPI_Scatterv");
    return rc;
}

int MPI_Allgather(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
    long long bytes = sb == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
    record3(ENTRY, ALLGATHER, bytes, -1, -1, "MPI_Allgather");
    int rc = PMPI_Allgather(sb, scount, stype, rb, rcount, rtype, comm);
    record3(EXIT, ALLGATHER, bytes, -1, -1, "MPI_Allgather");
    return rc;
}

int MPI_Alltoall(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
    long long bytes = sb == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
    record3(ENTRY, ALLTOALL, bytes, -1, -1, "MPI_Alltoall");
    int rc = PMPI_Alltoall(sb, scount, stype, rb, rcount, rtype, comm);
    record3(EXIT, ALLTOALL, bytes, -1, -1, "MPI_Alltoall");
    return rc;
}
