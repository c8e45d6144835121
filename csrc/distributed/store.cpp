// The stores of csrc/distributed/store.h. TCPStore's wire format: every
// request and every reply is a u32 length then that many bytes; a request
// opens with a command byte, strings go as u32 length + bytes, integers as
// 8 little-endian bytes. A WAIT is answered only once its keys exist, so a
// client whose wait timed out drops its connection (a late answer would
// desynchronize it) and reconnects on its next call.
#include "csrc/distributed/store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace fastt {
namespace distributed {

namespace {

using Clock = std::chrono::steady_clock;
const char* const kWorkersKey = "__fastt/tcpstore_workers";
// Set by destroy_process_group on rank 0 just before its store goes.
const char* const kClosingKey = "__fastt/closing";
const char* const kFileUsersKey = "__fastt/filestore_users";
const char* const kFileDoneKey = "__fastt/filestore_finished";

bool internal_key(const std::string& k) { return k.rfind("__fastt/", 0) == 0; }

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

int64_t parse_int(const Bytes& v, const std::string& key) {
  std::string s(v.begin(), v.end());
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  FASTT_CHECK(!s.empty() && end && *end == '\0' && errno == 0, DistStoreError,
              "Store.add: the value at key '{}' is not an integer", key);
  return x;
}

std::string keys_text(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

[[noreturn]] void wait_timeout(const std::vector<std::string>& keys,
                               Millis t) {
  throw DistStoreError(fmt::format("wait timeout after {}ms, keys: {}",
                                   t.count(), keys_text(keys)));
}

// The key-value map every store but TCP's client keeps, with the ops that
// change it (the TCP server and FileStore's replay share them).
struct KV {
  std::unordered_map<std::string, Bytes> map;

  int64_t add(const std::string& key, int64_t amount) {
    auto it = map.find(key);
    int64_t v = (it == map.end() ? 0 : parse_int(it->second, key)) + amount;
    map[key] = to_bytes(std::to_string(v));
    return v;
  }
  Bytes compare_set(const std::string& key, const Bytes& expected,
                    const Bytes& desired) {
    auto it = map.find(key);
    if (it == map.end()) {
      if (!expected.empty()) return expected;
      map[key] = desired;
      return desired;
    }
    if (it->second == expected) it->second = desired;
    return it->second;
  }
  bool check(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!map.count(k)) return false;
    return true;
  }
  int64_t num_keys() const {
    int64_t n = 0;
    for (const auto& kv : map) n += !internal_key(kv.first);
    return n;
  }
};

// ---- HashStore ----

class HashStore final : public Store {
 public:
  explicit HashStore(Millis t) : Store(t) {}
  void set(const std::string& key, const Bytes& value) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      kv_.map[key] = value;
    }
    cv_.notify_all();
  }
  Bytes get(const std::string& key) override {
    std::unique_lock<std::mutex> g(mu_);
    wait_locked(g, {key}, timeout_);
    return kv_.map[key];
  }
  int64_t add(const std::string& key, int64_t amount) override {
    int64_t v;
    {
      std::lock_guard<std::mutex> g(mu_);
      v = kv_.add(key, amount);
    }
    cv_.notify_all();
    return v;
  }
  Bytes compare_set(const std::string& key, const Bytes& expected,
                    const Bytes& desired) override {
    Bytes v;
    {
      std::lock_guard<std::mutex> g(mu_);
      v = kv_.compare_set(key, expected, desired);
    }
    cv_.notify_all();
    return v;
  }
  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> g(mu_);
    return kv_.check(keys);
  }
  bool delete_key(const std::string& key) override {
    std::lock_guard<std::mutex> g(mu_);
    return kv_.map.erase(key) > 0;
  }
  int64_t num_keys() override {
    std::lock_guard<std::mutex> g(mu_);
    return kv_.num_keys();
  }
  void wait(const std::vector<std::string>& keys, Millis t) override {
    std::unique_lock<std::mutex> g(mu_);
    wait_locked(g, keys, t);
  }

 private:
  void wait_locked(std::unique_lock<std::mutex>& g,
                   const std::vector<std::string>& keys, Millis t) {
    if (!cv_.wait_for(g, t, [&] { return kv_.check(keys); }))
      wait_timeout(keys, t);
  }
  std::mutex mu_;
  std::condition_variable cv_;
  KV kv_;
};

// ---- FileStore: records 'S' key value / 'D' key, appended under flock ----

void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void put_i64(Bytes& b, int64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(uint64_t(v) >> (8 * i)));
}
void put_str(Bytes& b, const uint8_t* p, size_t n) {
  put_u32(b, uint32_t(n));
  b.insert(b.end(), p, p + n);
}
void put_str(Bytes& b, const std::string& s) {
  put_str(b, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
void put_str(Bytes& b, const Bytes& s) { put_str(b, s.data(), s.size()); }

// Reads what put_* wrote; ok() turns false on a short buffer.
struct Reader {
  const uint8_t* p;
  size_t n;
  bool good = true;
  bool take(size_t k) {
    if (k > n) good = false;
    return good;
  }
  uint32_t u32() {
    if (!take(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
    p += 4, n -= 4;
    return v;
  }
  int64_t i64() {
    if (!take(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    p += 8, n -= 8;
    return int64_t(v);
  }
  Bytes bytes() {
    uint32_t k = u32();
    if (!take(k)) return {};
    Bytes b(p, p + k);
    p += k, n -= k;
    return b;
  }
  std::string str() {
    Bytes b = bytes();
    return std::string(b.begin(), b.end());
  }
  uint8_t u8() {
    if (!take(1)) return 0;
    uint8_t v = *p;
    ++p, --n;
    return v;
  }
};

class FileStore final : public Store {
 public:
  FileStore(const std::string& path, int64_t world_size, Millis t)
      : Store(t), path_(path), world_size_(world_size) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    FASTT_CHECK(fd_ >= 0, DistStoreError,
                "FileStore: cannot open '{}': {}", path, std::strerror(errno));
    int64_t users = add(kFileUsersKey, 1);
    if (world_size_ > 0 && users > world_size_) {
      add(kFileUsersKey, -1);
      ::close(fd_);
      throw DistStoreError(fmt::format(
          "FileStore: {} users of '{}' exceed world_size {} (a file left "
          "by an earlier run?)", users, path, world_size_));
    }
  }
  // The file goes when every user is done: world_size of them when it is
  // known (a rank that finishes early must not take the keys from one
  // still to come), else the last open one. Unlinked under the lock.
  ~FileStore() override {
    try {
      Locked l(this, LOCK_EX);
      int64_t finished = kv_.add(kFileDoneKey, 1);
      append('S', kFileDoneKey, kv_.map[kFileDoneKey]);
      int64_t users = kv_.map.count(kFileUsersKey)
                          ? parse_int(kv_.map[kFileUsersKey], kFileUsersKey)
                          : 0;
      if (world_size_ > 0 ? finished >= world_size_ : finished >= users)
        ::unlink(path_.c_str());
    } catch (...) {
    }
    ::close(fd_);
  }
  void set(const std::string& key, const Bytes& value) override {
    Locked l(this, LOCK_EX);
    append('S', key, value);
    kv_.map[key] = value;
  }
  Bytes get(const std::string& key) override {
    for (;;) {
      wait({key}, timeout_);
      Locked l(this, LOCK_SH);
      auto it = kv_.map.find(key);
      if (it != kv_.map.end()) return it->second;
    }  // deleted between the wait and the read: wait again
  }
  int64_t add(const std::string& key, int64_t amount) override {
    Locked l(this, LOCK_EX);
    int64_t v = kv_.add(key, amount);
    append('S', key, kv_.map[key]);
    return v;
  }
  Bytes compare_set(const std::string& key, const Bytes& expected,
                    const Bytes& desired) override {
    Locked l(this, LOCK_EX);
    Bytes before = kv_.map.count(key) ? kv_.map[key] : Bytes{};
    bool had = kv_.map.count(key) > 0;
    Bytes v = kv_.compare_set(key, expected, desired);
    if (!had ? kv_.map.count(key) > 0 : kv_.map[key] != before)
      append('S', key, v);
    return v;
  }
  bool check(const std::vector<std::string>& keys) override {
    Locked l(this, LOCK_SH);
    return kv_.check(keys);
  }
  bool delete_key(const std::string& key) override {
    Locked l(this, LOCK_EX);
    bool had = kv_.map.erase(key) > 0;
    if (had) append('D', key, {});
    return had;
  }
  int64_t num_keys() override {
    Locked l(this, LOCK_SH);
    return kv_.num_keys();
  }
  void wait(const std::vector<std::string>& keys, Millis t) override {
    auto deadline = Clock::now() + t;
    while (!check(keys)) {
      if (Clock::now() >= deadline) wait_timeout(keys, t);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  // Holds the file lock and replays the records others appended since.
  struct Locked {
    FileStore* s;
    Locked(FileStore* store, int how) : s(store) {
      s->mu_.lock();
      while (::flock(s->fd_, how) != 0 && errno == EINTR) {
      }
      s->refresh();
    }
    ~Locked() {
      ::flock(s->fd_, LOCK_UN);
      s->mu_.unlock();
    }
  };
  void refresh() {
    struct stat st;
    FASTT_CHECK(::fstat(fd_, &st) == 0, DistStoreError, "FileStore: {}",
                std::strerror(errno));
    if (st.st_size <= pos_) return;
    Bytes buf(size_t(st.st_size - pos_));
    ssize_t got = ::pread(fd_, buf.data(), buf.size(), pos_);
    FASTT_CHECK(got == ssize_t(buf.size()), DistStoreError,
                "FileStore: short read of '{}'", path_);
    Reader r{buf.data(), buf.size()};
    while (r.n > 0) {
      uint8_t op = r.u8();
      std::string key = r.str();
      Bytes value = r.bytes();
      FASTT_CHECK(r.good && (op == 'S' || op == 'D'), DistStoreError,
                  "FileStore: '{}' is not a fastt FileStore file", path_);
      if (op == 'S')
        kv_.map[key] = std::move(value);
      else
        kv_.map.erase(key);
    }
    pos_ = st.st_size;
  }
  void append(uint8_t op, const std::string& key, const Bytes& value) {
    Bytes rec{op};
    put_str(rec, key);
    put_str(rec, value);
    ssize_t put = ::pwrite(fd_, rec.data(), rec.size(), pos_);
    FASTT_CHECK(put == ssize_t(rec.size()), DistStoreError,
                "FileStore: cannot write '{}': {}", path_,
                std::strerror(errno));
    pos_ += off_t(rec.size());
  }

  std::string path_;
  int64_t world_size_;
  int fd_ = -1;
  off_t pos_ = 0;
  std::mutex mu_;
  KV kv_;
};

// ---- TCPStore ----

enum Cmd : uint8_t { kSet, kGet, kAdd, kCas, kCheck, kDel, kNum, kWait };

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= size_t(k);
  }
  return true;
}

Bytes framed(const Bytes& payload) {
  Bytes b;
  put_u32(b, uint32_t(payload.size()));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

class TcpServer {
 public:
  TcpServer(int port, Millis timeout) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FASTT_CHECK(listen_ >= 0, DistNetworkError, "TCPStore: socket: {}",
                std::strerror(errno));
    int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(uint16_t(port));
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_, 1024) != 0) {
      int e = errno;
      ::close(listen_);
      throw DistNetworkError(fmt::format(
          "The server socket has failed to listen on any local network "
          "address. port: {}, code: {}, message: {}",
          port, e, std::strerror(e)));
    }
    socklen_t len = sizeof a;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    (void)timeout;
    FASTT_CHECK(::pipe2(wake_, O_CLOEXEC) == 0, DistNetworkError,
                "TCPStore: pipe: {}", std::strerror(errno));
    thread_ = std::thread([this] { loop(); });
  }
  ~TcpServer() {
    uint8_t b = 1;
    (void)!::write(wake_[1], &b, 1);
    thread_.join();
    for (auto& c : clients_) ::close(c.first);
    ::close(listen_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  int port() const { return port_; }

 private:
  struct Waiter {
    int fd;
    std::vector<std::string> keys;
  };
  void loop() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_, POLLIN, 0});
      for (auto& c : clients_) fds.push_back({c.first, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int c = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          set_nodelay(c);
          clients_[c];
        }
      }
      for (size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents) serve(fds[i].fd);
    }
  }
  void drop(int fd) {
    ::close(fd);
    clients_.erase(fd);
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                  [&](const Waiter& w) { return w.fd == fd; }),
                   waiters_.end());
  }
  void serve(int fd) {
    uint8_t tmp[65536];
    ssize_t k = ::recv(fd, tmp, sizeof tmp, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (k <= 0) return drop(fd);
    Bytes& in = clients_[fd];
    in.insert(in.end(), tmp, tmp + k);
    size_t used = 0;
    while (in.size() - used >= 4) {
      Reader h{in.data() + used, 4};
      uint32_t len = h.u32();
      if (in.size() - used - 4 < len) break;
      Reader r{in.data() + used + 4, len};
      used += 4 + len;
      bool ok;
      try {
        ok = handle(fd, r);
      } catch (...) {  // never let a bad client end the server thread
        ok = false;
      }
      if (!ok) return drop(fd);
    }
    in.erase(in.begin(), in.begin() + long(used));
  }
  bool reply(int fd, const Bytes& payload) {
    Bytes b = framed(payload);
    return write_all(fd, b.data(), b.size());
  }
  // Answers the waits the last change completed.
  void wake_waiters() {
    for (size_t i = 0; i < waiters_.size();) {
      if (kv_.check(waiters_[i].keys)) {
        reply(waiters_[i].fd, Bytes{1});
        waiters_.erase(waiters_.begin() + long(i));
      } else {
        ++i;
      }
    }
  }
  bool handle(int fd, Reader& r) {
    uint8_t cmd = r.u8();
    Bytes out;
    switch (cmd) {
      case kSet: {
        std::string key = r.str();
        kv_.map[key] = r.bytes();
        out.push_back(0);
        break;
      }
      case kGet: {
        auto it = kv_.map.find(r.str());
        out.push_back(it != kv_.map.end());
        if (it != kv_.map.end()) put_str(out, it->second);
        break;
      }
      case kAdd: {
        std::string key = r.str();
        int64_t amount = r.i64();
        try {
          put_i64(out, kv_.add(key, amount));
          out.insert(out.begin(), 1);
        } catch (const DistStoreError&) {
          out.assign(1, 0);
        }
        break;
      }
      case kCas: {
        std::string key = r.str();
        Bytes exp = r.bytes(), des = r.bytes();
        put_str(out, kv_.compare_set(key, exp, des));
        break;
      }
      case kCheck:
      case kWait: {
        uint32_t n = r.u32();
        if (!r.good || n > r.n / 4) return false;  // a malformed request
        std::vector<std::string> keys(n);
        for (auto& k : keys) k = r.str();
        if (!r.good) return false;
        bool ok = kv_.check(keys);
        if (cmd == kWait && !ok) {
          waiters_.push_back({fd, std::move(keys)});
          return true;
        }
        out.push_back(ok);
        break;
      }
      case kDel:
        out.push_back(kv_.map.erase(r.str()) > 0);
        break;
      case kNum:
        put_i64(out, kv_.num_keys());
        break;
      default:
        return false;
    }
    if (!r.good || !reply(fd, out)) return false;
    if (cmd == kSet || cmd == kAdd || cmd == kCas) wake_waiters();
    return true;
  }

  int listen_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::map<int, Bytes> clients_;  // fd -> bytes received, not yet handled
  std::vector<Waiter> waiters_;
  KV kv_;
};

class TcpStore final : public Store {
 public:
  TcpStore(const std::string& host, int port, int64_t world_size,
           bool is_master, Millis t, bool wait_for_workers)
      : Store(t), host_(host) {
    if (is_master) server_ = std::make_unique<TcpServer>(port, t);
    port_ = server_ ? server_->port() : port;
    connect();
    int64_t joined = add(kWorkersKey, 1);
    if (is_master && wait_for_workers && world_size > 0) {
      auto deadline = Clock::now() + t;
      while (joined < world_size) {
        if (Clock::now() >= deadline)
          throw DistStoreError(fmt::format(
              "Timed out after {} seconds waiting for clients. {}/{} "
              "clients joined.",
              std::chrono::duration_cast<std::chrono::seconds>(t).count(),
              joined, world_size));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        joined = add(kWorkersKey, 0);
      }
    }
  }
  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  void wait_server_gone(Millis t) {
    std::lock_guard<std::mutex> g(mu_);
    if (server_ || fd_ < 0) return;
    auto deadline = Clock::now() + t;
    for (;;) {
      auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left.count() <= 0) return;
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) return;
      uint8_t tmp[256];
      ssize_t k = ::recv(fd_, tmp, sizeof tmp, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;  // closed by the server
    }
    ::close(fd_);
    fd_ = -1;
  }

  void set(const std::string& key, const Bytes& value) override {
    Bytes q{kSet};
    put_str(q, key);
    put_str(q, value);
    call(q);
  }
  Bytes get(const std::string& key) override {
    wait({key}, timeout_);
    Bytes q{kGet};
    put_str(q, key);
    Bytes a = call(q);
    Reader r{a.data(), a.size()};
    FASTT_CHECK(r.u8() == 1, DistStoreError, "TCPStore.get: key '{}' was "
                "deleted while being read", key);
    return r.bytes();
  }
  int64_t add(const std::string& key, int64_t amount) override {
    Bytes q{kAdd};
    put_str(q, key);
    put_i64(q, amount);
    Bytes a = call(q);
    Reader r{a.data(), a.size()};
    FASTT_CHECK(r.u8() == 1, DistStoreError,
                "Store.add: the value at key '{}' is not an integer", key);
    return r.i64();
  }
  Bytes compare_set(const std::string& key, const Bytes& expected,
                    const Bytes& desired) override {
    Bytes q{kCas};
    put_str(q, key);
    put_str(q, expected);
    put_str(q, desired);
    Bytes a = call(q);
    Reader r{a.data(), a.size()};
    return r.bytes();
  }
  bool check(const std::vector<std::string>& keys) override {
    return call(keys_request(kCheck, keys)).at(0) != 0;
  }
  bool delete_key(const std::string& key) override {
    Bytes q{kDel};
    put_str(q, key);
    return call(q).at(0) != 0;
  }
  int64_t num_keys() override {
    Bytes a = call(Bytes{kNum});
    Reader r{a.data(), a.size()};
    return r.i64();
  }
  void wait(const std::vector<std::string>& keys, Millis t) override {
    std::lock_guard<std::mutex> g(mu_);
    if (!send_locked(keys_request(kWait, keys))) reconnect_fail();
    Bytes a;
    int rc = recv_locked(&a, t);
    if (rc == 0) {  // timed out: the late answer would desynchronize us
      ::close(fd_);
      fd_ = -1;
      wait_timeout(keys, t);
    }
    if (rc < 0) reconnect_fail();
  }

 private:
  static Bytes keys_request(Cmd c, const std::vector<std::string>& keys) {
    Bytes q{uint8_t(c)};
    put_u32(q, uint32_t(keys.size()));
    for (const auto& k : keys) put_str(q, k);
    return q;
  }
  [[noreturn]] void reconnect_fail() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw DistNetworkError(fmt::format(
        "TCPStore: the connection to the server at {}:{} was lost (did "
        "the process that hosts it, rank 0, exit?)", host_, port_));
  }
  void connect() {
    auto deadline = Clock::now() + timeout_;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    std::string port = std::to_string(port_);
    for (;;) {
      addrinfo* res = nullptr;
      if (::getaddrinfo(host_.c_str(), port.c_str(), &hints, &res) == 0) {
        for (addrinfo* a = res; a; a = a->ai_next) {
          int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                            a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            set_nodelay(fd);
            fd_ = fd;
            break;
          }
          ::close(fd);
        }
        ::freeaddrinfo(res);
      }
      if (fd_ >= 0 && !connected_once_ && server_closing()) {
        ::close(fd_);  // the last job's server on its way out: wait for
        fd_ = -1;      // the next one on this port
      }
      if (fd_ >= 0) {
        connected_once_ = true;
        return;
      }
      // A server that answered before and refuses now is gone: no retries
      // for the whole timeout (a fresh job retries while rank 0 starts).
      if (connected_once_)
        throw DistNetworkError(fmt::format(
            "TCPStore: cannot reconnect to the server at {}:{} (did the "
            "process that hosts it, rank 0, exit?)", host_, port_));
      if (Clock::now() >= deadline)
        throw DistNetworkError(fmt::format(
            "The client socket has timed out after {}ms while trying to "
            "connect to ({}, {}).", timeout_.count(), host_, port_));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // Whether the server has been told it is shutting down (its store was
  // destroyed with destroy_process_group): a first connection to it is
  // the wrong one.
  bool server_closing() {
    Bytes q = keys_request(kCheck, {kClosingKey});
    Bytes b = framed(q), a;
    if (!write_all(fd_, b.data(), b.size())) return true;
    return recv_locked(&a, Millis(5000)) != 1 || a.empty() || a[0] != 0;
  }
  bool send_locked(const Bytes& q) {
    if (fd_ < 0) connect();
    Bytes b = framed(q);
    return write_all(fd_, b.data(), b.size());
  }
  // 1: a reply, 0: timed out, -1: connection lost.
  int recv_locked(Bytes* out, Millis t) {
    auto deadline = Clock::now() + t;
    Bytes buf;
    size_t need = 4;
    bool have_len = false;
    while (buf.size() < need) {
      auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left.count() < 0) return 0;
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return 0;
      if (rc < 0) return -1;
      uint8_t tmp[65536];
      size_t want = std::min(sizeof tmp, need - buf.size());
      ssize_t k = ::recv(fd_, tmp, want, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return -1;
      buf.insert(buf.end(), tmp, tmp + k);
      if (!have_len && buf.size() == 4) {
        Reader r{buf.data(), 4};
        need = 4 + r.u32();
        have_len = true;
      }
    }
    out->assign(buf.begin() + 4, buf.end());
    return 1;
  }
  Bytes call(const Bytes& q) {
    std::lock_guard<std::mutex> g(mu_);
    if (!send_locked(q)) reconnect_fail();
    Bytes a;
    int rc = recv_locked(&a, timeout_);
    if (rc == 0) {
      ::close(fd_);
      fd_ = -1;
      throw DistStoreError(fmt::format(
          "TCPStore: no answer from the server at {}:{} within {}ms",
          host_, port_, timeout_.count()));
    }
    if (rc < 0) reconnect_fail();
    return a;
  }

  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  bool connected_once_ = false;
  std::mutex mu_;
  std::unique_ptr<TcpServer> server_;
};

// ---- PrefixStore ----

class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base)
      : Store(base->timeout()), prefix_(std::move(prefix) + "/"),
        base_(std::move(base)) {}
  void set(const std::string& key, const Bytes& value) override {
    base_->set(k(key), value);
  }
  Bytes get(const std::string& key) override { return base_->get(k(key)); }
  int64_t add(const std::string& key, int64_t amount) override {
    return base_->add(k(key), amount);
  }
  Bytes compare_set(const std::string& key, const Bytes& expected,
                    const Bytes& desired) override {
    return base_->compare_set(k(key), expected, desired);
  }
  bool check(const std::vector<std::string>& keys) override {
    return base_->check(ks(keys));
  }
  bool delete_key(const std::string& key) override {
    return base_->delete_key(k(key));
  }
  int64_t num_keys() override { return base_->num_keys(); }
  void wait(const std::vector<std::string>& keys, Millis t) override {
    base_->wait(ks(keys), t);
  }
  void set_timeout(Millis t) override {
    Store::set_timeout(t);
    base_->set_timeout(t);
  }

 private:
  std::string k(const std::string& key) const { return prefix_ + key; }
  std::vector<std::string> ks(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (const auto& key : keys) out.push_back(k(key));
    return out;
  }
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace

std::shared_ptr<Store> make_hash_store(Millis timeout) {
  return std::make_shared<HashStore>(timeout);
}
std::shared_ptr<Store> make_file_store(const std::string& path,
                                       int64_t world_size, Millis timeout) {
  return std::make_shared<FileStore>(path, world_size, timeout);
}
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port,
                                      int64_t world_size, bool is_master,
                                      Millis timeout, bool wait_for_workers) {
  FASTT_CHECK(port >= 0 && port < 65536, ValueError,
              "TCPStore: port {} is out of range", port);
  return std::make_shared<TcpStore>(host, port, world_size, is_master,
                                    timeout, wait_for_workers);
}
int tcp_store_port(const Store& store) {
  auto* t = dynamic_cast<const TcpStore*>(&store);
  return t ? t->port() : -1;
}
void wait_server_gone(Store& store, Millis timeout) {
  if (auto* t = dynamic_cast<TcpStore*>(&store)) t->wait_server_gone(timeout);
}
std::shared_ptr<Store> make_prefix_store(const std::string& prefix,
                                         std::shared_ptr<Store> base) {
  return std::make_shared<PrefixStore>(prefix, std::move(base));
}

}  // namespace distributed
}  // namespace fastt
