/* A minimal SIL controller in C (docs/SIL.md): answers every observation of a `vdsim-gym
 * serve` server with a constant action until the end message. The exchange (the hello,
 * the wire format, the link: UDP or shared memory) is vdsim_sil.h's sil_serve; a control
 * law goes where constant() copies the action.
 *
 *   cc -O2 -o zero_client zero_client.c
 *   ./zero_client udp:127.0.0.1:5600 2 [a0 a1 ...]   # or shm:NAME; n_actions, the action
 *
 * Prints the number of observations answered and the end's reason code. */
#include "vdsim_sil.h"

static double fixed[SIL_MAX_VALUES];

static void constant(void* ctx, const double* obs, int n, double* action) {
  (void)obs, (void)n;
  memcpy(action, fixed, 8 * (size_t) * (const int*)ctx);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s udp:HOST:PORT|shm:NAME N_ACTIONS [ACTION...]\n", argv[0]);
    return 2;
  }
  int n_act = atoi(argv[2]);
  if (n_act < 1 || n_act > SIL_MAX_VALUES) {
    fprintf(stderr, "N_ACTIONS must be in [1, %d]\n", SIL_MAX_VALUES);
    return 2;
  }
  for (int i = 0; i < n_act && 3 + i < argc; ++i) fixed[i] = atof(argv[3 + i]);
  sil_link link;
  if (sil_open(&link, argv[1]) != 0) return 1;
  return sil_serve(&link, n_act, constant, &n_act);
}
