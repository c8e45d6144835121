// Generator: a seedable source of Philox4x32-10 counter ranges, plus the
// process-wide default generator (torch.manual_seed, torch.initial_seed).
// A random op reserves its blocks with one locked reserve() call and hands
// (seed, offset) to its kernel; see kernels/philox.h for the counter layout.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "macros.h"

namespace fastt {

class Generator;
// csrc/capture.h: a recording notes each reservation (replays reserve
// again, so they draw what eager would).
extern FASTT_PROFILER_VIS bool g_capturing;
namespace capture {
void note_reserve(Generator* g, uint64_t blocks);
}

class Generator {
 public:
  // torch's default CPU seed, so a fresh process starts from a fixed state.
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;
  // Bytes of the get_state() blob: the seed then the offset, little-endian.
  static constexpr size_t kStateBytes = 16;

  struct State {
    uint64_t seed = kDefaultSeed;
    uint64_t offset = 0;  // in Philox blocks (128-bit counters)
  };
  // The counter range one op call owns: blocks [offset, offset + count).
  struct Range {
    uint64_t seed;
    uint64_t offset;
  };

  explicit Generator(uint64_t seed = kDefaultSeed) { state_.seed = seed; }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // Sets the seed and rewinds the counter (torch.Generator.manual_seed).
  Generator& manual_seed(uint64_t seed);
  // Seeds from a non-deterministic source and returns the seed
  // (torch.Generator.seed).
  uint64_t seed();
  uint64_t initial_seed() const;

  State state() const;
  void set_state(State s);
  // The state as a 16-byte blob (torch.Generator.get_state/set_state).
  std::vector<uint8_t> get_state() const;
  void set_state(const std::vector<uint8_t>& blob);
  void set_state(const uint8_t* data, size_t nbytes);

  // Reserves `blocks` counter blocks and returns where they start. The only
  // synchronised step of a random op: taken once per call, not per element.
  Range reserve(uint64_t blocks) {
    if (FASTT_UNLIKELY(g_capturing)) capture::note_reserve(this, blocks);
    std::lock_guard<std::mutex> lock(mu_);
    Range r{state_.seed, state_.offset};
    state_.offset += blocks;
    return r;
  }

 private:
  mutable std::mutex mu_;
  State state_;
};

// The generator random ops use when none is passed.
Generator& default_generator();
// torch.manual_seed / torch.seed / torch.initial_seed on the default one.
void manual_seed(uint64_t seed);
uint64_t seed();
uint64_t initial_seed();

}  // namespace fastt
