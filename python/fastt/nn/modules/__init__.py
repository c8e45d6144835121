"""fastt.nn.modules: every layer class, re-exported by fastt.nn. To add a
module, put it in the file of its family and list it here."""

from .module import Module  # noqa: F401
from .container import (  # noqa: F401
    ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential)
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .conv import (  # noqa: F401
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
from .pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
    AvgPool2d, AvgPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
    LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .normalization import (  # noqa: F401
    GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm)
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .activation import (  # noqa: F401
    CELU, SELU, Hardshrink, Softshrink, Softsign, Tanhshrink, ELU, GELU, GLU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
    LogSoftmax, Mish, MultiheadAttention, ReLU, ReLU6, Sigmoid, SiLU,
    PReLU, RReLU, Softmax, Softmin, Softplus, Tanh, Threshold)
from .dropout import (  # noqa: F401
    AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
    FeatureAlphaDropout)
from .fold import Fold, Unfold  # noqa: F401
from .upsampling import (  # noqa: F401
    Upsample, UpsamplingBilinear2d, UpsamplingNearest2d)
from .pixelshuffle import (  # noqa: F401
    ChannelShuffle, PixelShuffle, PixelUnshuffle)
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,
    CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
    MarginRankingLoss, MSELoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss,
    SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .rnn import (  # noqa: F401
    GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase)
from .transformer import (  # noqa: F401
    Transformer, TransformerDecoder, TransformerDecoderLayer,
    TransformerEncoder, TransformerEncoderLayer)
