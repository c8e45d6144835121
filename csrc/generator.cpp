// Generator seeding and state blobs; see generator.h.
#include "generator.h"

#include <chrono>
#include <random>

#include "capture.h"
#include "errors.h"

namespace fastt {

Generator& Generator::manual_seed(uint64_t seed) {
  capture::host_read("seeding a generator");
  std::lock_guard<std::mutex> lock(mu_);
  state_.seed = seed;
  state_.offset = 0;
  return *this;
}

uint64_t Generator::seed() {
  // random_device may be deterministic on some platforms; mixing in the
  // clock keeps two processes apart anyway.
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ rd();
  s ^= uint64_t(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_.seed;
}

Generator::State Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void Generator::set_state(State s) {
  capture::host_read("setting a generator's state");
  std::lock_guard<std::mutex> lock(mu_);
  state_ = s;
}

std::vector<uint8_t> Generator::get_state() const {
  State s = state();
  std::vector<uint8_t> blob(kStateBytes);
  for (int i = 0; i < 8; ++i) {
    blob[i] = uint8_t(s.seed >> (8 * i));
    blob[8 + i] = uint8_t(s.offset >> (8 * i));
  }
  return blob;
}

void Generator::set_state(const std::vector<uint8_t>& blob) {
  set_state(blob.data(), blob.size());
}

void Generator::set_state(const uint8_t* data, size_t nbytes) {
  FASTT_CHECK(nbytes == kStateBytes, RuntimeError,
              "set_state: expected a generator state of {} bytes (seed and "
              "offset), but got {} bytes",
              kStateBytes, nbytes);
  State s{0, 0};
  for (int i = 0; i < 8; ++i) {
    s.seed |= uint64_t(data[i]) << (8 * i);
    s.offset |= uint64_t(data[8 + i]) << (8 * i);
  }
  set_state(s);
}

Generator& default_generator() {
  static Generator* gen = new Generator();  // never destroyed: ops may run
  return *gen;                              // during static destruction
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }
uint64_t seed() { return default_generator().seed(); }
uint64_t initial_seed() { return default_generator().initial_seed(); }

}  // namespace fastt
