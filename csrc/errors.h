// Typed errors. Every check in fastt throws one of these with a message in
// PyTorch's style naming the op; the Python binding maps each class to the
// Python exception of the same name (OutOfMemoryError -> MemoryError).
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

#include "macros.h"

namespace fastt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Shapes, sizes, states that make an op impossible (torch: RuntimeError).
class RuntimeError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
// An (op, device, dtype) combination with no kernel.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// FASTT_CHECK(cond, ErrorClass, fmt, args...): throws when cond is false.
// The message is formatted only on failure, in a cold function.
#define FASTT_CHECK(cond, Cls, ...)                           \
  do {                                                        \
    if (FASTT_UNLIKELY(!(cond)))                              \
      ::fastt::detail::throw_error<Cls>(__VA_ARGS__);         \
  } while (0)

namespace detail {
template <class Cls, class... Args>
[[noreturn]] FASTT_NOINLINE void throw_error(fmt::format_string<Args...> f,
                                             Args&&... args) {
  throw Cls(fmt::format(f, std::forward<Args>(args)...));
}
}  // namespace detail

}  // namespace fastt
