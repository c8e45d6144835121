// Picks the vector math table (kernels/cpu/vec_math.h) once, when fastt
// loads: the widest level the CPU runs, or a lower one that FASTT_CPU_ISA
// asks for (torch's ATEN_CPU_CAPABILITY is read too, as torch reads it).
#include "kernels/cpu/vec_math.h"

#include <cctype>
#include <cstdlib>
#include <string>

namespace fastt {
namespace vec_math {

#if defined(FASTT_HAS_SLEEF)
namespace sse2 { extern const Table table; }
namespace avx2 { extern const Table table; }
namespace avx512 { extern const Table table; }
#endif

namespace {

std::string g_warning;

int supported_level() {
#if defined(FASTT_HAS_SLEEF)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 3;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return 2;
  return 1;
#else
  return 0;
#endif
}

const char* level_name(int level) {
  static const char* const names[] = {"none", "sse2", "avx2", "avx512"};
  return names[level];
}

int requested_level(int best) {
  const char* var = "FASTT_CPU_ISA";
  const char* v = std::getenv(var);
  if (!v || !*v) {
    var = "ATEN_CPU_CAPABILITY";
    v = std::getenv(var);
  }
  if (!v || !*v) return best;
  std::string s(v);
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  int want = -1;
  if (s == "sse2" || s == "default") want = 1;
  else if (s == "avx2") want = 2;
  else if (s == "avx512") want = 3;
  if (want < 0) {
    g_warning = std::string(var) + "=" + v +
                " is not one of sse2, default, avx2, avx512; using " +
                level_name(best);
    return best;
  }
  if (want > best) {
    g_warning = std::string(var) + "=" + v + ": this CPU runs only up to " +
                level_name(best) + "; using " + level_name(best);
    return best;
  }
  return want;
}

const int g_supported = supported_level();
const int g_level = g_supported ? requested_level(g_supported) : 0;

const Table* pick() {
#if defined(FASTT_HAS_SLEEF)
  switch (g_level) {
    case 3: return &avx512::table;
    case 2: return &avx2::table;
    case 1: return &sse2::table;
  }
#endif
  return nullptr;
}

}  // namespace

const Table* const g_table = pick();

const char* isa_in_use() { return level_name(g_level); }
const char* isa_supported() { return level_name(g_supported); }
const char* isa_warning() { return g_warning.c_str(); }

}  // namespace vec_math
}  // namespace fastt
