"""fastt.backends: global switches named like torch.backends'.

    fastt.backends.cpu.get_cpu_capability()        # "AVX512", "AVX2", ...

    fastt.backends.cuda.matmul.allow_tf32 = True   # float32 GEMM on TF32
    fastt.backends.cudnn.allow_tf32 = False        # float32 convs in FP32

Like torch: TF32 is off by default for cuBLAS matmuls and on by default
for cuDNN convolutions. Without CUDA both read False and setting them does
nothing.
"""
from . import _C


def _tf32_switch(which):
    def get(self):
        return bool(_C._get_allow_tf32(which))

    def set(self, value):
        _C._set_allow_tf32(which, bool(value))
    return property(get, set)


class _Matmul:
    allow_tf32 = _tf32_switch(0)


class _Cuda:
    matmul = _Matmul()

    @staticmethod
    def is_built():
        return bool(_C._cuda_built)


class _Cudnn:
    allow_tf32 = _tf32_switch(1)

    @staticmethod
    def is_available():
        return bool(getattr(_C, "_cudnn_built", 0))


class _Cpu:
    """The instruction set of the CPU kernels picked at load time: the
    widest this CPU runs, or a lower one named by FASTT_CPU_ISA (sse2,
    avx2, avx512; torch's ATEN_CPU_CAPABILITY is read as well)."""

    _NAMES = {"avx512": "AVX512", "avx2": "AVX2", "sse2": "DEFAULT",
              "none": "DEFAULT"}

    @staticmethod
    def get_cpu_capability():
        """As torch.backends.cpu.get_cpu_capability(): "AVX512", "AVX2"
        or "DEFAULT"."""
        return _Cpu._NAMES[_C._cpu_isa()["in_use"]]


class _Mkldnn:
    """oneDNN (torch's name: mkldnn) for float32 CPU convolutions and their
    gradients, and bfloat16 matrix products where the processor has bf16
    instructions (AVX512-BF16, AMX). is_available(): fastt was built with
    it; enabled = False sends every convolution to fastt's own im2col +
    GEMM path and every bf16 product to float32 sgemm."""

    @staticmethod
    def is_available():
        return bool(_C._mkldnn()[0])

    @property
    def enabled(self):
        return bool(_C._mkldnn()[1])

    @enabled.setter
    def enabled(self, value):
        _C._mkldnn(1 if value else 0)

    def flags(self, enabled=False):
        """Context manager as torch.backends.mkldnn.flags(enabled=...)."""
        import contextlib

        @contextlib.contextmanager
        def ctx():
            old = self.enabled
            self.enabled = enabled
            try:
                yield
            finally:
                self.enabled = old
        return ctx()


cpu = _Cpu()
mkldnn = _Mkldnn()
cuda = _Cuda()
cudnn = _Cudnn()
