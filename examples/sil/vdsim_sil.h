/* The SIL transports for a controller in C (docs/SIL.md): UDP, or the shared-memory
 * region of `vdsim-gym serve --shm NAME`. A header-only helper for the example clients:
 *
 *   sil_link link;
 *   if (sil_open(&link, "udp:127.0.0.1:5600") != 0) ...   // or "shm:NAME"
 *   sil_send(&link, bytes, n);
 *   long got = sil_recv(&link, buf, sizeof buf, 10.0);    // -1: nothing within 10 s
 *
 * or, for a controller, the whole exchange: sil_serve(&link, n_actions, control, ctx) says
 * hello, answers every observation with control(ctx, obs, n, action) until the end
 * message, and prints the observations answered and the end's reason code.
 *
 * Both poll for SIL_SPIN_S seconds before they sleep (yielding the CPU between polls, so
 * a server on the same core runs at once): a real-time loop answers within microseconds
 * instead of paying a wake-up. Linux, GCC or Clang (their __atomic
 * builtins; the region's seq words are read and written atomically). */
#ifndef VDSIM_SIL_H
#define VDSIM_SIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef SIL_SPIN_S
#define SIL_SPIN_S 0.02
#endif

/* The region's layout (csrc/vdsim/shm_link.hpp). */
#define SIL_SHM_HEADER 64
#define SIL_SHM_SLOT_HEAD 16
#define SIL_SHM_STRIDE 8256
#define SIL_SHM_CAPACITY (SIL_SHM_STRIDE - SIL_SHM_SLOT_HEAD)
#define SIL_SHM_SIZE (SIL_SHM_HEADER + 2 * SIL_SHM_STRIDE)

typedef struct {
  int fd;               /* UDP: the connected socket; -1 for shared memory */
  unsigned char* base;  /* shared memory: the region */
  unsigned char* in;    /* the simulator -> controller slot */
  unsigned char* out;   /* the controller -> simulator slot */
  uint32_t last_in;     /* the incoming slot's seq last read */
} sil_link;

static double sil_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int sil_open_udp(sil_link* link, const char* hostport) {
  char host[256];
  const char* colon = strrchr(hostport, ':');
  if (!colon || (size_t)(colon - hostport) >= sizeof host) return -1;
  memcpy(host, hostport, (size_t)(colon - hostport));
  host[colon - hostport] = '\0';
  struct sockaddr_in server;
  memset(&server, 0, sizeof server);
  server.sin_family = AF_INET;
  server.sin_port = htons((uint16_t)atoi(colon + 1));
  link->fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (link->fd < 0 || inet_pton(AF_INET, host, &server.sin_addr) != 1 ||
      connect(link->fd, (struct sockaddr*)&server, sizeof server) != 0)
    return -1;
  return 0;
}

/* Opens the region the server created (waits up to 10 s for it to appear). */
static int sil_open_shm(sil_link* link, const char* name) {
  char path[256];
  if (snprintf(path, sizeof path, "/%s", name) >= (int)sizeof path) return -1;
  int fd = -1;
  for (double end = sil_now() + 10.0; fd < 0 && sil_now() < end;) {
    fd = shm_open(path, O_RDWR, 0);
    if (fd < 0) usleep(10000);
  }
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < SIL_SHM_SIZE) return -1;
  void* p = mmap(NULL, SIL_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return -1;
  link->base = (unsigned char*)p;
  uint16_t version;
  memcpy(&version, link->base + 4, 2);
  if (memcmp(link->base, "VDSM", 4) != 0 || version != 1) return -1;
  link->in = link->base + SIL_SHM_HEADER;
  link->out = link->in + SIL_SHM_STRIDE;
  link->last_in = __atomic_load_n((uint32_t*)link->in, __ATOMIC_ACQUIRE) & ~1u;
  return 0;
}

/* "udp:HOST:PORT" or "shm:NAME"; 0 on success, -1 (with a message on stderr) else. */
static int sil_open(sil_link* link, const char* where) {
  memset(link, 0, sizeof *link);
  link->fd = -1;
  int rc = -1;
  if (strncmp(where, "udp:", 4) == 0) rc = sil_open_udp(link, where + 4);
  else if (strncmp(where, "shm:", 4) == 0) rc = sil_open_shm(link, where + 4);
  if (rc != 0) fprintf(stderr, "cannot open %s (udp:HOST:PORT or shm:NAME)\n", where);
  return rc;
}

static long sil_futex(uint32_t* addr, int op, uint32_t val, const struct timespec* ts) {
  return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static int sil_send(sil_link* link, const unsigned char* data, size_t n) {
  if (link->fd >= 0) return send(link->fd, data, n, 0) == (ssize_t)n ? 0 : -1;
  if (n > SIL_SHM_CAPACITY) return -1;
  uint32_t* seq = (uint32_t*)link->out;
  uint32_t v = __atomic_load_n(seq, __ATOMIC_RELAXED);
  for (;;) { /* take the slot: seq even -> odd */
    if (!(v & 1u) && __atomic_compare_exchange_n(seq, &v, v + 1, 1, __ATOMIC_ACQUIRE,
                                                 __ATOMIC_RELAXED))
      break;
    v = __atomic_load_n(seq, __ATOMIC_RELAXED);
  }
  __atomic_thread_fence(__ATOMIC_RELEASE);
  const uint32_t len = (uint32_t)n, pid = (uint32_t)getpid();
  memcpy(link->out + 8, &len, 4);
  memcpy(link->out + 12, &pid, 4);
  memcpy(link->out + SIL_SHM_SLOT_HEAD, data, n);
  __atomic_store_n(seq, v + 2, __ATOMIC_SEQ_CST);
  if (__atomic_load_n((uint32_t*)(link->out + 4), __ATOMIC_SEQ_CST) != 0)
    sil_futex(seq, FUTEX_WAKE, INT_MAX, NULL);
  return 0;
}

/* The next message (its length), or -1 when none came within timeout_s seconds. */
static long sil_recv(sil_link* link, unsigned char* buf, size_t cap, double timeout_s) {
  const double start = sil_now(), deadline = start + timeout_s, spin_end = start + SIL_SPIN_S;
  if (link->fd >= 0) {
    for (;;) {
      ssize_t got = recv(link->fd, buf, cap, MSG_DONTWAIT);
      if (got >= 0) return (long)got;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      sched_yield(); /* a server on this core runs now, not after our time slice */
      double now = sil_now();
      if (now >= deadline) return -1;
      if (now >= spin_end) { /* sleep in the socket until the deadline */
        double left = deadline - now;
        struct timeval tv = {(time_t)left, (suseconds_t)((left - (time_t)left) * 1e6)};
        if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
        setsockopt(link->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        got = recv(link->fd, buf, cap, 0);
        return got >= 0 ? (long)got : -1;
      }
    }
  }
  uint32_t* seq = (uint32_t*)link->in;
  for (unsigned i = 0;; ++i) {
    uint32_t v1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
    if (v1 != link->last_in && !(v1 & 1u)) {
      uint32_t len;
      memcpy(&len, link->in + 8, 4);
      if (len > SIL_SHM_CAPACITY || len > cap) len = 0; /* not a message of ours */
      memcpy(buf, link->in + SIL_SHM_SLOT_HEAD, len);
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      if (__atomic_load_n(seq, __ATOMIC_RELAXED) != v1) continue; /* written meanwhile */
      link->last_in = v1;
      return (long)len;
    }
    if ((i & 63u) != 63u) continue;
    sched_yield();
    double now = sil_now();
    if (now >= deadline) return -1;
    if (now < spin_end) continue;
    double nap = deadline - now < 0.05 ? deadline - now : 0.05;
    struct timespec ts = {(time_t)nap, (long)((nap - (time_t)nap) * 1e9)};
    uint32_t* waiters = (uint32_t*)(link->in + 4);
    __atomic_store_n(waiters, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(seq, __ATOMIC_SEQ_CST) == v1) sil_futex(seq, FUTEX_WAIT, v1, &ts);
    __atomic_store_n(waiters, 0u, __ATOMIC_RELAXED);
  }
}

#define SIL_MAX_VALUES 1024

/* A control law: the observation's n values in, the action's values out. */
typedef void (*sil_control)(void* ctx, const double* obs, int n, double* action);

/* The wire format (docs/SIL.md) written out with memcpy (little-endian host, no struct
 * padding): the hello, then each observation ("VDSO", version, n, seq, sample tick,
 * t_sample, n f64) answered with a command ("VDSC", version, n_act, the same seq, n_act
 * f64) until the end message ("VDSE", version, reason). Prints "answered reason";
 * returns 0, or 1 when the server is silent for 10 s. */
static int sil_serve(sil_link* link, int n_act, sil_control control, void* ctx) {
  static unsigned char in[28 + 8 * SIL_MAX_VALUES], out[12 + 8 * SIL_MAX_VALUES];
  static double obs[SIL_MAX_VALUES], action[SIL_MAX_VALUES];
  const uint16_t version = 1, n_out = (uint16_t)n_act;
  unsigned char hello[6];
  memcpy(hello, "VDSH", 4);
  memcpy(hello + 4, &version, 2);
  sil_send(link, hello, sizeof hello);
  memcpy(out, "VDSC", 4);
  memcpy(out + 4, &version, 2);
  memcpy(out + 6, &n_out, 2);
  long answered = 0;
  for (;;) {
    long got = sil_recv(link, in, sizeof in, 10.0); /* a server silent for 10 s is gone */
    if (got < 0) {
      fprintf(stderr, "no message from the server within 10 s\n");
      return 1;
    }
    if (got >= 8 && memcmp(in, "VDSE", 4) == 0) {
      uint16_t reason;
      memcpy(&reason, in + 6, 2);
      printf("%ld %u\n", answered, reason);
      return 0;
    }
    uint16_t n;
    memcpy(&n, in + 6, 2);
    if (got < 28 || memcmp(in, "VDSO", 4) != 0 || n > SIL_MAX_VALUES ||
        got != 28 + 8 * (long)n)
      continue; /* not an observation */
    memcpy(obs, in + 28, 8 * (size_t)n);
    control(ctx, obs, n, action);
    memcpy(out + 8, in + 8, 4); /* seq: the observation answered */
    memcpy(out + 12, action, 8 * (size_t)n_act);
    sil_send(link, out, 12 + 8 * (size_t)n_act);
    ++answered;
  }
}

#endif /* VDSIM_SIL_H */
