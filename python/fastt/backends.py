"""fastt.backends: global switches named like torch.backends'.

    fastt.backends.cuda.matmul.allow_tf32 = True   # float32 GEMM on TF32
    fastt.backends.cudnn.allow_tf32                 # the same switch

fastt has one TF32 switch for cuBLAS and cuDNN (off by default, like
torch's matmul switch; torch's cuDNN switch defaults to on). Without CUDA
the switch reads False and setting it does nothing.
"""
from . import _C


class _Matmul:
    @property
    def allow_tf32(self):
        return bool(_C._get_allow_tf32())

    @allow_tf32.setter
    def allow_tf32(self, value):
        _C._set_allow_tf32(bool(value))


class _Cuda:
    matmul = _Matmul()

    @staticmethod
    def is_built():
        return bool(_C._cuda_built)


class _Cudnn:
    allow_tf32 = _Matmul.allow_tf32

    @staticmethod
    def is_available():
        return bool(getattr(_C, "_cudnn_built", 0))


cuda = _Cuda()
cudnn = _Cudnn()
