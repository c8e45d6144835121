// Picks the instruction-set level (kernels/cpu/cpu_isa.h) once.
// FASTT_ISA_BUILT (from CMake, for this file and csrc/dispatch.cpp) has bit
// 1 << level set for each level the kernel families were compiled for;
// without it (off x86-64) the families are baseline code and the level only
// chooses the vector math table.
#include "kernels/cpu/cpu_isa.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace fastt {
namespace cpu_isa {
namespace {

int cpu_level() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") &&
                  __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2")
#if !defined(__clang__)  // clang 14's builtin has no "f16c"; every AVX2
                  // CPU has it (Intel since Ivy Bridge, AMD since Piledriver)
                  && __builtin_cpu_supports("f16c")
#endif
      ;
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd");
  return v4 ? kAvx512 : v3 ? kAvx2 : kSse2;
#else
  return kNone;
#endif
}

#if defined(FASTT_ISA_BUILT)
constexpr int kBuilt = FASTT_ISA_BUILT;
#elif defined(__x86_64__) && defined(__GNUC__)
constexpr int kBuilt = (1 << kSse2) | (1 << kAvx2) | (1 << kAvx512);
#else
constexpr int kBuilt = 1 << kNone;
#endif

bool built(int l) { return (kBuilt >> l) & 1; }

struct Choice {
  int supported = kNone;
  int level = kNone;
  std::string warning;
};

Choice choose() {
  Choice c;
  const int cpu = cpu_level();
  c.supported = -1;
  for (int l = cpu; l >= kNone; --l)
    if (built(l)) { c.supported = l; break; }
  if (c.supported < 0) {
    // A build without the baseline level (FASTT_CPU_ISA_LEVELS) on a CPU
    // below every level it has: its kernels cannot run here.
    std::fprintf(stderr,
                 "fastt: this build's CPU kernels need %s or wider "
                 "(FASTT_CPU_ISA_LEVELS) and this CPU runs only %s\n",
                 name(__builtin_ctz(unsigned(kBuilt))), name(cpu));
    std::abort();
  }
  c.level = c.supported;
  const char* var = "FASTT_CPU_ISA";
  const char* v = std::getenv(var);
  if (!v || !*v) {
    var = "ATEN_CPU_CAPABILITY";
    v = std::getenv(var);
  }
  if (!v || !*v || c.supported == kNone) return c;
  std::string s(v);
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  int want = -1;
  if (s == "sse2" || s == "default") want = kSse2;
  else if (s == "avx2") want = kAvx2;
  else if (s == "avx512") want = kAvx512;
  const std::string given = std::string(var) + "=" + v;
  if (want < 0) {
    c.warning = given + " is not one of sse2, default, avx2, avx512; using " +
                name(c.level);
    return c;
  }
  if (want > c.supported) {
    c.warning = given + ": " +
                (want > cpu ? "this CPU runs only up to "
                            : "this build's kernels go only up to ") +
                name(c.supported) + "; using " + name(c.supported);
    return c;
  }
  int pick = -1;
  for (int l = want; l >= kSse2; --l)
    if (built(l)) { pick = l; break; }
  if (pick < 0) {  // below the lowest level built: the lowest one
    for (int l = want; l <= c.supported; ++l)
      if (built(l)) { pick = l; break; }
    c.warning = given + ": this build's kernels start at " +
                std::string(name(pick)) + "; using " + name(pick);
  }
  c.level = pick;
  return c;
}

const Choice& choice() {
  static const Choice c = choose();
  return c;
}

// The largest cache level's size for CPU 0 from sysfs ("32768K"), or
// sysconf's; 0 when neither says.
int64_t find_llc_bytes() {
  int best_level = 0;
  int64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), sz(dir + "size"), ty(dir + "type");
    int level = 0;
    std::string size, type;
    if (!(lv >> level) || !(sz >> size)) break;
    ty >> type;
    if (type == "Instruction") continue;
    char* end = nullptr;
    int64_t bytes = std::strtoll(size.c_str(), &end, 10);
    if (end && (*end == 'K' || *end == 'k')) bytes <<= 10;
    else if (end && (*end == 'M' || *end == 'm')) bytes <<= 20;
    if (level > best_level && bytes > 0) {
      best_level = level;
      best = bytes;
    }
  }
  if (best > 0) return best;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return l3;
#endif
  return 0;
}

int64_t initial_stream_store_bytes() {
  if (const char* v = std::getenv("FASTT_STREAM_STORE_BYTES")) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n >= 0)
      return n == 0 ? INT64_MAX : int64_t(n);
  }
  const int64_t llc = llc_bytes();
  // unknown cache: 32 MiB, a common server L3
  return llc > 0 ? llc : int64_t(32) << 20;
}

}  // namespace

int64_t llc_bytes() {
  static const int64_t b = find_llc_bytes();
  return b;
}

int64_t g_stream_store_bytes = initial_stream_store_bytes();
int64_t g_stream_store_runs = 0;

int level() { return choice().level; }
int supported() { return choice().supported; }
int built_mask() { return kBuilt; }
const char* warning() { return choice().warning.c_str(); }

const char* name(int l) {
  static const char* const names[] = {"none", "sse2", "avx2", "avx512"};
  return l >= 0 && l <= kAvx512 ? names[l] : "?";
}

}  // namespace cpu_isa
}  // namespace fastt
