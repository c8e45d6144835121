// A one-rank stand-in for libnccl.so.2 under the CUDA emulator (device
// memory is host memory here): every collective of a world of one is a
// copy, so test_cuda_distributed.py runs fastt's NCCL back end end to end
// (dlopen, symbol binding, the unique id through the store, dtype and op
// mapping, routing of CUDA tensors) without a GPU. Point-to-point needs a
// peer and fails as NCCL's invalid usage. Not a model of NCCL's numerics.
#include <cstddef>
#include <cstring>

extern "C" {

struct ncclComm {
  int nranks;
};
struct ncclUniqueId {
  char internal[128];
};

static size_t elem_size(int type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return type >= 0 && type < 10 ? sizes[type] : 0;
}
static int copy(const void* src, void* dst, size_t bytes) {
  if (src != dst) std::memmove(dst, src, bytes);
  return 0;
}

int ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id->internal, 7, sizeof id->internal);
  return 0;
}
int ncclCommInitRank(ncclComm** comm, int nranks, ncclUniqueId id,
                     int rank) {
  if (nranks != 1 || rank != 0 || id.internal[0] != 7) return 4;
  *comm = new ncclComm{nranks};
  return 0;
}
int ncclCommDestroy(ncclComm* comm) {
  delete comm;
  return 0;
}
int ncclCommAbort(ncclComm* comm) { return ncclCommDestroy(comm); }
const char* ncclGetErrorString(int e) {
  return e == 0 ? "no error" : e == 4 ? "invalid argument"
                             : "invalid usage";
}
int ncclAllReduce(const void* s, void* r, size_t n, int type, int op,
                  ncclComm*, void*) {
  if (!elem_size(type) || op < 0 || op > 4) return 4;
  return copy(s, r, n * elem_size(type));
}
int ncclBroadcast(const void* s, void* r, size_t n, int type, int root,
                  ncclComm*, void*) {
  return root == 0 ? copy(s, r, n * elem_size(type)) : 4;
}
int ncclReduce(const void* s, void* r, size_t n, int type, int op, int root,
               ncclComm*, void*) {
  return root == 0 ? copy(s, r, n * elem_size(type)) : 4;
}
int ncclAllGather(const void* s, void* r, size_t n, int type, ncclComm*,
                  void*) {
  return copy(s, r, n * elem_size(type));
}
int ncclSend(const void*, size_t, int, int, ncclComm*, void*) { return 5; }
int ncclRecv(void*, size_t, int, int, ncclComm*, void*) { return 5; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }

}  // extern "C"
