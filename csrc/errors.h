// Typed errors. Every check in fastt throws one of these with a message in
// PyTorch's style naming the op; the Python binding maps each class to the
// Python exception of the same name (OutOfMemoryError -> MemoryError).
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
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
// A matrix a factorization or solve cannot handle (singular, not positive
// definite, no convergence): torch.linalg.LinAlgError, a RuntimeError.
class LinAlgError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
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

// An index outside its dimension: torch raises RuntimeError from gather,
// scatter and scatter_add, IndexError from indexing and the other index
// ops. `op` is the op name the check carries (nullptr for indexing).
[[noreturn]] inline void throw_index_out_of_range(const char* op,
                                                  std::string msg) {
  if (op && (std::strcmp(op, "gather") == 0 ||
             std::strcmp(op, "scatter") == 0 ||
             std::strcmp(op, "scatter_add") == 0))
    throw RuntimeError(std::move(msg));
  throw IndexError(std::move(msg));
}

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
