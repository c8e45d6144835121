"""fastt.backends: global switches named like torch.backends'.

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


cuda = _Cuda()
cudnn = _Cudnn()
