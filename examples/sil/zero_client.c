/* A minimal SIL controller in C (docs/SIL.md): says hello to a `vdsim-gym serve` server,
 * then answers every observation with a constant action until the end message. The wire
 * format written out with memcpy (little-endian host; no struct padding): what a
 * controller in C, C++ or generated code does around its own control law.
 *
 *   cc -O2 -o zero_client zero_client.c
 *   ./zero_client 127.0.0.1 5600 2 [a0 a1 ...]   # n_actions, then the action (default 0)
 *
 * Prints the number of observations answered and the end's reason code. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_VALUES 1024

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s HOST PORT N_ACTIONS [ACTION...]\n", argv[0]);
    return 2;
  }
  const int n_act = atoi(argv[3]);
  if (n_act < 1 || n_act > MAX_VALUES) {
    fprintf(stderr, "N_ACTIONS must be in [1, %d]\n", MAX_VALUES);
    return 2;
  }
  double action[MAX_VALUES] = {0};
  for (int i = 0; i < n_act && 4 + i < argc; ++i) action[i] = atof(argv[4 + i]);

  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in server = {0};
  server.sin_family = AF_INET;
  server.sin_port = htons((uint16_t)atoi(argv[2]));
  if (fd < 0 || inet_pton(AF_INET, argv[1], &server.sin_addr) != 1 ||
      connect(fd, (struct sockaddr*)&server, sizeof server) != 0) {
    perror("socket");
    return 1;
  }
  struct timeval tv = {10, 0};  /* a server silent for 10 s is gone */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

  const uint16_t version = 1;
  unsigned char hello[6];
  memcpy(hello, "VDSH", 4);
  memcpy(hello + 4, &version, 2);
  send(fd, hello, sizeof hello, 0);

  unsigned char in[28 + 8 * MAX_VALUES], out[12 + 8 * MAX_VALUES];
  const uint16_t n = (uint16_t)n_act;
  memcpy(out, "VDSC", 4);
  memcpy(out + 4, &version, 2);
  memcpy(out + 6, &n, 2);
  memcpy(out + 12, action, 8 * (size_t)n_act);
  long answered = 0;
  for (;;) {
    /* Poll before blocking: an answer within the poll costs no sleep and wake-up. */
    ssize_t got = -1;
    for (int spin = 0; spin < 20000 && got < 0; ++spin) got = recv(fd, in, sizeof in, MSG_DONTWAIT);
    if (got < 0) got = recv(fd, in, sizeof in, 0);
    if (got < 0) {
      perror("recv");
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
    send(fd, out, 12 + 8 * (size_t)n_act, 0);
    ++answered;
  }
}
