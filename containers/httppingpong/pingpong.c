/* The HTTP services of paper 003's ping-pong system (the paper's were written in Dart).
 *
 *   pingpong pong PORT                 GET /?m=N is answered with an N-byte body
 *   pingpong ping PORT HOST UPPORT     GET /?m=N is relayed to the pong at HOST:UPPORT and its
 *                                      answer returned to the client
 *
 * Both answer GET /cpu with their own CPU time (user + system seconds, getrusage): the study
 * reads it before and after each load test to show the services' headroom. One thread per
 * client connection with blocking sockets and HTTP/1.1 keep-alive; ping keeps one upstream
 * connection per client connection, so a test measures requests, not connection set-up. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_MESSAGE (64L * 1024 * 1024) /* larger requests are refused (400) */
#define CHUNK (256 * 1024)
#define HEADER_MAX 8192

static char payload[CHUNK];
static const char *upstream_host;
static const char *upstream_port;

struct conn {
    int fd;
    char buf[HEADER_MAX];
    size_t len; /* bytes in buf not yet consumed */
    char *chunk; /* ping's upstream connection: its own buffer for the body it relays */
};

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads until a blank line ends the header; returns its length (with the blank line) or -1. */
static long read_header(struct conn *c) {
    for (;;) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (end) return end + 4 - c->buf;
        if (c->len == sizeof c->buf) return -1;
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c->len += (size_t)r;
    }
}

static void consume(struct conn *c, size_t n) {
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

static int tcp_nodelay(int fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int send_header(int fd, int status, long length, int keep_alive) {
    char h[256];
    const char *reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : "Bad Gateway";
    int n = snprintf(h, sizeof h,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/octet-stream\r\n"
                     "Content-Length: %ld\r\nConnection: %s\r\n\r\n",
                     status, reason, length, keep_alive ? "keep-alive" : "close");
    return send_all(fd, h, (size_t)n);
}

static int send_text(int fd, int status, const char *text, int keep_alive) {
    if (send_header(fd, status, (long)strlen(text), keep_alive)) return -1;
    return send_all(fd, text, strlen(text));
}

static int connect_upstream(void) {
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(upstream_host, upstream_port, &hints, &res) != 0) return -1;
    int fd = socket(res->ai_family, res->ai_socktype, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) tcp_nodelay(fd);
    return fd;
}

/* ping: asks pong for m bytes on the kept upstream connection and streams its body on. */
static int relay(int client, struct conn *up, long m, int keep_alive) {
    char req[128];
    int n = snprintf(req, sizeof req, "GET /?m=%ld HTTP/1.1\r\nHost: pong\r\n\r\n", m);
    for (int attempt = 0; attempt < 2; attempt++) { /* a closed kept connection is reopened once */
        if (up->fd < 0) {
            up->fd = connect_upstream();
            up->len = 0;
        }
        if (up->fd >= 0 && send_all(up->fd, req, (size_t)n) == 0) {
            long hl = read_header(up);
            if (hl > 0) {
                char *cl = memmem(up->buf, (size_t)hl, "Content-Length:", 15);
                long length = cl ? strtol(cl + 15, NULL, 10) : -1;
                if (length < 0) return -1;
                consume(up, (size_t)hl);
                if (send_header(client, 200, length, keep_alive)) return -1;
                long left = length;
                size_t have = up->len < (size_t)left ? up->len : (size_t)left;
                if (send_all(client, up->buf, have)) return -1;
                consume(up, have);
                left -= (long)have;
                while (left > 0) {
                    ssize_t r = recv(up->fd, up->chunk, left < CHUNK ? (size_t)left : CHUNK, 0);
                    if (r < 0 && errno == EINTR) continue;
                    if (r <= 0) return -1;
                    if (send_all(client, up->chunk, (size_t)r)) return -1;
                    left -= r;
                }
                return 0;
            }
        }
        if (up->fd >= 0) close(up->fd);
        up->fd = -1;
    }
    return send_text(client, 502, "pong unreachable\n", keep_alive);
}

static int answer(int client, long m, int keep_alive) {
    if (send_header(client, 200, m, keep_alive)) return -1;
    for (long left = m; left > 0; left -= CHUNK)
        if (send_all(client, payload, left < CHUNK ? (size_t)left : CHUNK)) return -1;
    return 0;
}

static int serve_cpu(int client, int keep_alive) {
    struct rusage u;
    char text[64];
    getrusage(RUSAGE_SELF, &u);
    snprintf(text, sizeof text, "%.6f\n",
             u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6);
    return send_text(client, 200, text, keep_alive);
}

static void *serve(void *arg) {
    struct conn *c = arg, *up = calloc(1, sizeof *up);
    up->fd = -1;
    up->chunk = upstream_host ? malloc(CHUNK) : NULL;
    tcp_nodelay(c->fd);
    for (;;) {
        long hl = read_header(c);
        if (hl < 0) break;
        c->buf[hl - 1] = '\0'; /* the header as one string (its last \n is not needed) */
        int http11 = strstr(c->buf, " HTTP/1.1\r\n") != NULL;
        int keep_alive = strcasestr(c->buf, "keep-alive") || (http11 && !strcasestr(c->buf, "close"));
        int rc;
        if (strncmp(c->buf, "GET /cpu ", 9) == 0) {
            rc = serve_cpu(c->fd, keep_alive);
        } else {
            char *q = strstr(c->buf, "m=");
            char *end = NULL;
            long m = q ? strtol(q + 2, &end, 10) : -1;
            if (strncmp(c->buf, "GET /", 5) != 0 || m < 0 || m > MAX_MESSAGE || end == q + 2)
                rc = send_text(c->fd, 400, "GET /?m=BYTES\n", keep_alive);
            else
                rc = upstream_host ? relay(c->fd, up, m, keep_alive) : answer(c->fd, m, keep_alive);
        }
        consume(c, (size_t)hl);
        if (rc || !keep_alive) break;
    }
    if (up->fd >= 0) close(up->fd);
    close(c->fd);
    free(up->chunk);
    free(up);
    free(c);
    return NULL;
}

int main(int argc, char **argv) {
    int is_ping = argc == 5 && strcmp(argv[1], "ping") == 0;
    if (!is_ping && !(argc == 3 && strcmp(argv[1], "pong") == 0)) {
        fprintf(stderr, "usage: %s pong PORT | %s ping PORT UPSTREAM_HOST UPSTREAM_PORT\n", argv[0], argv[0]);
        return 2;
    }
    if (is_ping) {
        upstream_host = argv[3];
        upstream_port = argv[4];
    }
    memset(payload, 'x', sizeof payload);
    signal(SIGPIPE, SIG_IGN);
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 512) != 0) {
        perror("bind/listen");
        return 1;
    }
    if (is_ping)
        printf("ping listening on port %s, pong at %s:%s\n", argv[2], upstream_host, upstream_port);
    else
        printf("pong listening on port %s\n", argv[2]);
    fflush(stdout);
    for (;;) {
        int fd = accept(s, NULL, NULL);
        if (fd < 0) continue;
        struct conn *c = calloc(1, sizeof *c);
        c->fd = fd;
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, serve, c) != 0) {
            close(fd);
            free(c);
        }
        pthread_attr_destroy(&attr);
    }
}
