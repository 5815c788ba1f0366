"""`tf.keras.layers` (TF 1.15): the layer classes, the functional merge forms, `InputSpec`, `Input`/`InputLayer`,
`serialize`/`deserialize`.

Modules by kind: `core` (Dense, Dropout, Flatten, Reshape, Lambda, ...), `merge` (Add, Concatenate, Dot, ...),
`convolutional`, `pooling`, `spatial_reshaping` (padding, cropping, upsampling), `normalization`, `embeddings`,
`recurrent` (+ `recurrent_cells`, `recurrent_layers`), `wrappers`, `advanced_activations`, `noise`. A new kind of
layer gets its own module here and its names added below (docs/keras.md).
"""
from ..engine.base_layer import Layer
from ..engine.input_layer import Input, InputLayer
from ..engine.input_spec import InputSpec
from .advanced_activations import ELU, LeakyReLU, PReLU, ReLU, Softmax, ThresholdedReLU
from .convolutional import (Conv1D, Conv2D, Conv2DTranspose, Convolution1D, Convolution2D, Convolution2DTranspose,
                            DepthwiseConv2D, SeparableConv1D, SeparableConv2D, SeparableConvolution1D,
                            SeparableConvolution2D)
from .core import (Activation, ActivityRegularization, Dense, Dropout, Flatten, Lambda, Masking, Permute,
                   RepeatVector, Reshape)
from .embeddings import Embedding
from .merge import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average, concatenate,
                    dot, maximum, minimum, multiply, subtract)
from .noise import AlphaDropout, GaussianDropout, GaussianNoise, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D
from .normalization import BatchNormalization, LayerNormalization
from .pooling import (AveragePooling1D, AveragePooling2D, AvgPool1D, AvgPool2D, GlobalAveragePooling1D,
                      GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalAvgPool1D, GlobalAvgPool2D,
                      GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalMaxPooling1D,
                      GlobalMaxPooling2D, GlobalMaxPooling3D, MaxPool1D, MaxPool2D, MaxPooling1D, MaxPooling2D)
from .recurrent import RNN, StackedRNNCells
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from .recurrent_layers import GRU, LSTM, SimpleRNN
from .serialization import deserialize, serialize
from .spatial_reshaping import Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D
from .wrappers import Bidirectional, TimeDistributed, Wrapper

__all__ = sorted(n for n in dir() if not n.startswith("_") and n not in {
    "advanced_activations", "convolutional", "core", "embeddings", "merge", "noise", "normalization", "pooling",
    "recurrent", "recurrent_cells", "recurrent_layers", "serialization", "spatial_reshaping", "weight_args",
    "wrappers"})
