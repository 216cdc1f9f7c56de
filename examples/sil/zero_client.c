/* A minimal SIL controller in C (docs/SIL.md): says hello to a `vdsim-gym serve` server,
 * then answers every observation with a constant action until the end message. The wire
 * format written out with memcpy (little-endian host; no struct padding): what a
 * controller in C, C++ or generated code does around its own control law. The transport
 * (UDP or shared memory) is vdsim_sil.h's.
 *
 *   cc -O2 -o zero_client zero_client.c
 *   ./zero_client udp:127.0.0.1:5600 2 [a0 a1 ...]   # or shm:NAME; n_actions, the action
 *
 * Prints the number of observations answered and the end's reason code. */
#include "vdsim_sil.h"

#define MAX_VALUES 1024

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s udp:HOST:PORT|shm:NAME N_ACTIONS [ACTION...]\n", argv[0]);
    return 2;
  }
  const int n_act = atoi(argv[2]);
  if (n_act < 1 || n_act > MAX_VALUES) {
    fprintf(stderr, "N_ACTIONS must be in [1, %d]\n", MAX_VALUES);
    return 2;
  }
  double action[MAX_VALUES] = {0};
  for (int i = 0; i < n_act && 3 + i < argc; ++i) action[i] = atof(argv[3 + i]);
  sil_link link;
  if (sil_open(&link, argv[1]) != 0) return 1;

  const uint16_t version = 1;
  unsigned char hello[6];
  memcpy(hello, "VDSH", 4);
  memcpy(hello + 4, &version, 2);
  sil_send(&link, hello, sizeof hello);

  static unsigned char in[28 + 8 * MAX_VALUES], out[12 + 8 * MAX_VALUES];
  const uint16_t n = (uint16_t)n_act;
  memcpy(out, "VDSC", 4);
  memcpy(out + 4, &version, 2);
  memcpy(out + 6, &n, 2);
  memcpy(out + 12, action, 8 * (size_t)n_act);
  long answered = 0;
  for (;;) {
    long got = sil_recv(&link, in, sizeof in, 10.0); /* a server silent for 10 s is gone */
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
    if (got < 28 || memcmp(in, "VDSO", 4) != 0) continue; /* not an observation */
    /* the control law would read the n f64 values at in + 28 here */
    memcpy(out + 8, in + 8, 4); /* seq: the observation answered */
    sil_send(&link, out, 12 + 8 * (size_t)n_act);
    ++answered;
  }
}
