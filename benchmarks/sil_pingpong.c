/* The raw round trip a SIL server is compared with (benchmarks/bench_sil.py): the
 * simulator's side of the wire format in C, with no simulator. It waits for a
 * controller's hello (examples/sil/zero_client.c), sends N observations of n values one
 * at a time, each answered before the next, one every PERIOD seconds (0: back to back),
 * waiting for the next period by sleeping (as a real-time loop, and the SIL server, do)
 * or spinning, sends the end message and prints the round trips' p50, p90, p99 and max in
 * microseconds. The transports are examples/sil/vdsim_sil.h's, the slots' roles swapped.
 *
 *   cc -O2 -I examples/sil -o sil_pingpong benchmarks/sil_pingpong.c
 *   ./sil_pingpong udp N n PERIOD sleep|spin    # prints "port P" first, then the round trips
 *   ./sil_pingpong shm:NAME N n PERIOD sleep|spin */
#include "vdsim_sil.h"

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double quantile(const double* sorted, long n, double q) {
  return sorted[(long)(q * (double)(n - 1) + 0.5)];
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s udp|shm:NAME N_SAMPLES N_VALUES PERIOD_S sleep|spin\n",
            argv[0]);
    return 2;
  }
  const int sleeping = strcmp(argv[5], "sleep") == 0;
  const long n_samples = atol(argv[2]);
  const int n_values = atoi(argv[3]);
  const double period = atof(argv[4]);
  if (n_samples < 1 || n_values < 0 || n_values > 1024) return 2;
  sil_link link;
  memset(&link, 0, sizeof link);
  link.fd = -1;
  char path[256] = "";
  static unsigned char in[28 + 8 * 1024], out[28 + 8 * 1024];
  if (strcmp(argv[1], "udp") == 0) {
    link.fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(link.fd, (struct sockaddr*)&addr, sizeof addr) != 0 ||
        getsockname(link.fd, (struct sockaddr*)&addr, &len) != 0)
      return 1;
    printf("port %d\n", ntohs(addr.sin_port));
    fflush(stdout);
    struct sockaddr_in client;
    len = sizeof client;
    if (recvfrom(link.fd, in, sizeof in, 0, (struct sockaddr*)&client, &len) < 0 ||
        connect(link.fd, (struct sockaddr*)&client, len) != 0) /* the hello's sender */
      return 1;
  } else if (strncmp(argv[1], "shm:", 4) == 0) {
    snprintf(path, sizeof path, "/%s", argv[1] + 4);
    int fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, SIL_SHM_SIZE) != 0) return 1;
    link.base = (unsigned char*)mmap(NULL, SIL_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                                     fd, 0);
    close(fd);
    const uint16_t version = 1;
    const uint32_t cap = SIL_SHM_CAPACITY, pid = (uint32_t)getpid();
    memcpy(link.base + 4, &version, 2);
    memcpy(link.base + 8, &cap, 4);
    memcpy(link.base + 12, &pid, 4);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(link.base, "VDSM", 4);
    link.out = link.base + SIL_SHM_HEADER; /* the simulator's slot */
    link.in = link.out + SIL_SHM_STRIDE;
    if (sil_recv(&link, in, sizeof in, 30.0) < 0) return 1; /* the hello */
  } else {
    return 2;
  }
  double* rtt = malloc(sizeof(double) * (size_t)n_samples);
  const uint16_t version = 1, n = (uint16_t)n_values;
  memcpy(out, "VDSO", 4);
  memcpy(out + 4, &version, 2);
  memcpy(out + 6, &n, 2);
  const size_t size = 28 + 8 * (size_t)n_values;
  double next = sil_now();
  for (long k = 0; k < n_samples; ++k) {
    if (sleeping && period > 0) { /* to the absolute time next, as the server's runner */
      struct timespec at = {(time_t)next, (long)((next - (time_t)next) * 1e9)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
    while (period > 0 && sil_now() < next) {
    }
    next += period;
    const uint32_t seq = (uint32_t)k;
    memcpy(out + 8, &seq, 4);
    const double t0 = sil_now();
    sil_send(&link, out, size);
    long got;
    do {
      got = sil_recv(&link, in, sizeof in, 5.0);
    } while (got >= 12 && memcmp(in + 8, &seq, 4) != 0);
    if (got < 0) return 1;
    rtt[k] = sil_now() - t0;
  }
  unsigned char end[8];
  memcpy(end, "VDSE", 4);
  memcpy(end + 4, &version, 2);
  memset(end + 6, 0, 2);
  sil_send(&link, end, sizeof end);
  qsort(rtt, (size_t)n_samples, sizeof(double), by_value);
  printf("rtt_us %.3f %.3f %.3f %.3f\n", 1e6 * quantile(rtt, n_samples, 0.5),
         1e6 * quantile(rtt, n_samples, 0.9), 1e6 * quantile(rtt, n_samples, 0.99),
         1e6 * rtt[n_samples - 1]);
  if (path[0]) {
    usleep(100000); /* the client reads the end message before the name goes */
    shm_unlink(path);
  }
  return 0;
}
