// The rendezvous stores of fastt.distributed (torch.distributed's Store
// API): a key-value space that every rank of a job shares, used to exchange
// the back ends' addresses and for user coordination. TCPStore (a server in
// rank 0's process, a client in each), FileStore (an append-only log in a
// shared file, under flock), HashStore (in process) and PrefixStore (a
// namespace over another store). Every blocking call takes the store's
// timeout and raises DistStoreError when it passes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/errors.h"

namespace fastt {
namespace distributed {

using Millis = std::chrono::milliseconds;
using Bytes = std::vector<uint8_t>;

// torch.distributed.DistError and its subclasses (the binding maps each to
// its Python class; all are RuntimeErrors).
class DistError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
class DistStoreError : public DistError {
 public:
  using DistError::DistError;
};
class DistNetworkError : public DistError {
 public:
  using DistError::DistError;
};
class DistBackendError : public DistError {
 public:
  using DistError::DistError;
};

class Store {
 public:
  explicit Store(Millis timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits (up to the timeout) until the key exists.
  virtual Bytes get(const std::string& key) = 0;
  // Adds to the integer stored at key (as decimal text; 0 if absent) and
  // returns the new value.
  virtual int64_t add(const std::string& key, int64_t amount) = 0;
  // Sets key to desired when its value is expected (or when it is absent
  // and expected is empty); returns the value now stored.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected,
                            const Bytes& desired) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  virtual void wait(const std::vector<std::string>& keys, Millis timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  Millis timeout() const { return timeout_; }
  virtual void set_timeout(Millis t) { timeout_ = t; }

 protected:
  Millis timeout_;
};

std::shared_ptr<Store> make_hash_store(Millis timeout);
std::shared_ptr<Store> make_file_store(const std::string& path,
                                       int64_t world_size, Millis timeout);
// A TCPStore: is_master starts the server (port 0 picks a free one) in a
// thread of this process; every instance is a client. With
// wait_for_workers and world_size > 0 the master waits until world_size
// clients have connected.
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port,
                                      int64_t world_size, bool is_master,
                                      Millis timeout, bool wait_for_workers);
int tcp_store_port(const Store& store);  // -1 when not a TCPStore
// A TCPStore client waits (up to timeout) for the server to close its
// connection (the master's store destroyed), so that a process group made
// again next connects to the new server, not to the old one on its way
// out. Other stores return at once.
void wait_server_gone(Store& store, Millis timeout);
std::shared_ptr<Store> make_prefix_store(const std::string& prefix,
                                         std::shared_ptr<Store> base);

}  // namespace distributed
}  // namespace fastt
