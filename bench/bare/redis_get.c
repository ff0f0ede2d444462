/* The least a Redis client can do at concurrency 1: GET one key over one TCP connection,
 * nothing parsed but the answer's length, no clock per request, no check beyond the length.
 * By default it waits for the answer as dbcompare's event loop does (read until EAGAIN,
 * then epoll_wait with no timeout), so that beside redis-benchmark and dbcompare it shows
 * what the round trip alone costs on this machine (bench/placement.sh). WAIT=ae waits as
 * redis-benchmark's event loop does instead: the socket taken out of the epoll set and put
 * back for writing, epoll_wait, the request written, out and back in for reading,
 * epoll_wait, the answer read (eight system calls a request against four).
 *   [WAIT=ae] redis_get PORT KEY COUNT [PASSWORD]   prints: ops/s and CPU us per op */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

/* Waits on `ep` for `fd` to be ready for `events`, with the socket registered afresh. */
static void wait_afresh(int ep, int fd, unsigned events) {
  struct epoll_event e = {.events = events, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_DEL, fd, &e);
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) fail("epoll_ctl");
  while (epoll_wait(ep, &e, 1, -1) < 1)
    if (errno != EINTR) fail("epoll_wait");
}

/* Reads one whole answer of `len` bytes, waiting on `ep` whenever the socket is empty
 * (with `ae`, before each read). */
static void answer(int fd, int ep, char *buf, size_t cap, size_t len, int ae) {
  size_t got = 0;
  while (got < len) {
    if (ae) wait_afresh(ep, fd, EPOLLIN);
    ssize_t r = read(fd, buf + got, cap - got);
    if (r > 0) {
      got += (size_t)r;
    } else if (r == 0) {
      fprintf(stderr, "the server closed the connection\n");
      exit(1);
    } else if (errno == EAGAIN) {
      struct epoll_event e;
      if (epoll_wait(ep, &e, 1, -1) < 0 && errno != EINTR) fail("epoll_wait");
    } else {
      fail("read");
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s PORT KEY COUNT [PASSWORD]\n", argv[0]);
    return 2;
  }
  const char *key = argv[2];
  long count = atol(argv[3]);
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr)) fail("connect");
  fcntl(fd, F_SETFL, O_NONBLOCK);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  char buf[65536], get[512];
  if (argc > 4) {
    int n = snprintf(get, sizeof get, "*2\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n", strlen(argv[4]), argv[4]);
    if (write(fd, get, n) != n) fail("write");
    answer(fd, ep, buf, sizeof buf, 5, 0); /* +OK\r\n */
    if (memcmp(buf, "+OK", 3)) { fprintf(stderr, "AUTH refused\n"); return 1; }
  }
  /* The answer's length, from a first GET: every later answer must be as long. */
  int n = snprintf(get, sizeof get, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
  if (write(fd, get, n) != n) fail("write");
  ssize_t first = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r > 0) { first = r; break; }
    if (r < 0 && errno == EAGAIN) { struct epoll_event e; epoll_wait(ep, &e, 1, -1); continue; }
    fail("read");
  }
  if (buf[0] != '$' || buf[1] == '-') { fprintf(stderr, "the key holds no value\n"); return 1; }
  int ae = getenv("WAIT") && !strcmp(getenv("WAIT"), "ae");
  double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < count; i++) {
    if (ae) wait_afresh(ep, fd, EPOLLOUT);
    if (write(fd, get, n) != n) fail("write");
    answer(fd, ep, buf, sizeof buf, (size_t)first, ae);
  }
  wall = seconds(CLOCK_MONOTONIC) - wall;
  cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
  printf("%.0f %.2f\n", count / wall, cpu / count * 1e6);
  return 0;
}
