// CPU emulation of the CUDA runtime API subset fastt uses (tests/cuda_emu):
// one fake device whose memory is host memory; every call is synchronous.
// Types mirror the real header closely enough for kernels/cuda/*.cpp and
// python/src/cuda.cpp to compile unchanged. Add a declaration here and its
// definition in emu_runtime.cpp when a source starts using a new call.
#pragma once
#include <cstddef>
#include <cstdint>

// The toolkit this mirrors (nvcc 13.0): sources that size things by the
// runtime version (optim.cu's 8 KB kernel-parameter chunk table) then
// launch exactly what the GPU build launches.
#define CUDART_VERSION 13000

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// Vector types with CUDA's alignment (kernels move bytes as uint2/uint4).
#define FASTT_EMU_VEC2(name, T, A) \
  struct alignas(A) name {         \
    T x, y;                        \
  };
#define FASTT_EMU_VEC4(name, T, A) \
  struct alignas(A) name {         \
    T x, y, z, w;                  \
  };
FASTT_EMU_VEC2(int2, int, 8)
FASTT_EMU_VEC2(uint2, unsigned, 8)
FASTT_EMU_VEC2(float2, float, 8)
FASTT_EMU_VEC2(double2, double, 16)
FASTT_EMU_VEC2(longlong2, long long, 16)
FASTT_EMU_VEC2(ulonglong2, unsigned long long, 16)
FASTT_EMU_VEC4(int4, int, 16)
FASTT_EMU_VEC4(uint4, unsigned, 16)
FASTT_EMU_VEC4(float4, float, 16)
FASTT_EMU_VEC4(ushort4, unsigned short, 8)
FASTT_EMU_VEC2(ushort2, unsigned short, 4)
#undef FASTT_EMU_VEC2
#undef FASTT_EMU_VEC4

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorNotReady = 600,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureImplicit = 906,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major;
  int minor;
  int multiProcessorCount;
};

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMalloc(void** p, size_t nbytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaHostAlloc(void** p, size_t nbytes, unsigned flags);
cudaError_t cudaMallocHost(void** p, size_t nbytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaHostGetDevicePointer(void** pdev, void* phost, unsigned flags);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n,
                       cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n,
                            cudaMemcpyKind kind, cudaStream_t s = nullptr);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_dev, const void* src,
                                int src_dev, size_t n,
                                cudaStream_t s = nullptr);
cudaError_t cudaMemset(void* p, int v, size_t n);
cudaError_t cudaMemsetAsync(void* p, int v, size_t n,
                            cudaStream_t s = nullptr);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags,
                                         int priority);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start,
                                 cudaEvent_t end);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t err);

// Stream capture and graphs: launches, copies and memsets queued on a
// capturing stream are recorded (not run); an instantiated graph runs them
// again, in order, on each cudaGraphLaunch. While a capture runs, calls
// that would synchronize with the host (cudaMemcpy, cudaMemset,
// cudaDeviceSynchronize, cudaStreamSynchronize, cudaStreamQuery and
// cudaEventSynchronize, cudaFree) and work queued on the legacy default
// stream fail and invalidate the capture, as on a GPU in the global mode.
// One capture at a time.
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode m);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t s,
                                  cudaStreamCaptureStatus* status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
const char* cudaGetErrorName(cudaError_t err);
