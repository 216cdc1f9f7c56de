/* The reference SIL controller in C (docs/SIL.md): the package's Stanley + PI speed
 * baseline (vdsim_gym.controllers.stanley_pi: csrc/vdsim/baselines.hpp's Stanley and
 * PISpeed, the same operations in the same order), answering a `vdsim-gym serve` server
 * over UDP or shared memory (vdsim_sil.h) until its end message. Its run is the
 * baseline's in process, bit for bit.
 *
 *   cc -O2 -ffp-contract=off -o stanley_client stanley_client.c -lm
 *   ./stanley_client udp:127.0.0.1:5600 $(python -c "import gymnasium as gym, vdsim_gym; \
 *       from vdsim_gym.sil import stanley_pi_args; \
 *       print(' '.join(stanley_pi_args(gym.make('VDSim-DLC-v0'))))")
 *
 * The arguments after udp:HOST:PORT (or shm:NAME) are name=value pairs (stanley_pi_args
 * gives them for an env): the observation's columns as index:scale (e_y, e_psi, vx, kappa_ref, r, v_ref)
 * and the gains (wheelbase, cg_to_front, max_steer, gain, soft_speed, yaw_damping,
 * accel_gain; dt, kp, ki). Prints the observations answered and the end's reason code. */
#include <math.h>

#include "vdsim_sil.h"

typedef struct {
  int index;
  double scale;
} column;

static column c_ey, c_epsi, c_vx, c_kappa, c_r, c_vref;
static double wheelbase, cg_to_front, max_steer = 1, gain = 8, soft_speed = 1,
              yaw_damping = 0, accel_gain = 0, dt = 0.02, kp = 0.5, ki = 0.1;

static int set_param(const char* arg) {
  const char* eq = strchr(arg, '=');
  if (!eq) return 0;
  size_t n = (size_t)(eq - arg);
  const char* v = eq + 1;
  struct { const char* name; column* c; } cols[] = {
      {"e_y", &c_ey}, {"e_psi", &c_epsi}, {"vx", &c_vx}, {"kappa_ref", &c_kappa},
      {"r", &c_r}, {"v_ref", &c_vref}};
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; ++i)
    if (strlen(cols[i].name) == n && strncmp(arg, cols[i].name, n) == 0)
      return sscanf(v, "%d:%lf", &cols[i].c->index, &cols[i].c->scale) == 2;
  struct { const char* name; double* p; } nums[] = {
      {"wheelbase", &wheelbase}, {"cg_to_front", &cg_to_front}, {"max_steer", &max_steer},
      {"gain", &gain}, {"soft_speed", &soft_speed}, {"yaw_damping", &yaw_damping},
      {"accel_gain", &accel_gain}, {"dt", &dt}, {"kp", &kp}, {"ki", &ki}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; ++i)
    if (strlen(nums[i].name) == n && strncmp(arg, nums[i].name, n) == 0)
      return sscanf(v, "%lf", nums[i].p) == 1;
  return 0;
}

static double physical(const double* obs, column c) {
  /* the observation is the env's float32, sent as f64: exact */
  return obs[c.index] * c.scale;
}

static double integral = 0.0; /* the PI's, in m (one episode per run) */

static void control(void* ctx, const double* obs, int n, double* action) {
  (void)ctx, (void)n;
  const double e_y = physical(obs, c_ey), e_psi = physical(obs, c_epsi), vx = physical(obs, c_vx);
  const double kappa = physical(obs, c_kappa), r = physical(obs, c_r);
  const double e_front = e_y + cg_to_front * sin(e_psi);
  const double feed_forward = atan(wheelbase * kappa) + accel_gain * vx * vx * kappa;
  const double cross = atan2(gain * e_front, fabs(vx) + soft_speed);
  const double damping = yaw_damping * (r - vx * kappa);
  const double a = (feed_forward - e_psi - cross - damping) / max_steer;
  action[0] = (float)(a < -1.0 ? -1.0 : (a > 1.0 ? 1.0 : a)); /* np.clip, then float32 */
  const double err = physical(obs, c_vref) - physical(obs, c_vx);
  const double trial = integral + err * dt;
  const double raw = kp * err + ki * trial;
  if (fabs(raw) < 1.0) integral = trial; /* conditional integration */
  const double u = kp * err + ki * integral;
  action[1] = (float)(u < -1.0 ? -1.0 : (u > 1.0 ? 1.0 : u));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s udp:HOST:PORT|shm:NAME name=value...\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i)
    if (!set_param(argv[i])) {
      fprintf(stderr, "bad parameter %s (name=value; columns as index:scale)\n", argv[i]);
      return 2;
    }
  sil_link link;
  if (sil_open(&link, argv[1]) != 0) return 1;
  return sil_serve(&link, 2, control, NULL);
}
