"""Every registered op type is in exactly one of three lists, each naming the test that covers it -- so an op
added without deciding how it is tested fails here.

* FD_GRADIENT_TESTED: differentiable ops whose registered gradient a test checks against central finite
  differences in float64 (`gradcheck.check_gradients`, or `gradcheck.numeric_grad` in fresh sessions for the
  seeded random ops). The internal gradient ops (ReluGrad, ConcatGrad, ...) are here too: their own gradients
  are checked to second order through `gradcheck.vjp`. Their forward is checked by the FD test of the
  op whose gradient they compute (an independent oracle); the public ops' forward by their module's test.
* FORWARD_ONLY: ops with no gradient (NotDifferentiable), each with the reason and the test checking its
  forward against numpy or a documented reference.
* INTERNAL_HELPERS: nn-/autodiff-private ops with no gradient of their own, with the test that covers them.

The mapping was first derived by instrumenting the suite (which op types' gradient functions run inside
`check_gradients`), then reviewed by hand; keep it honest when you change tests.
"""
import ast
import os

import pytest

import tensorfleet  # noqa: F401  (registers every op)
from tensorfleet import op_registry
from tensorfleet.kernels import registry as kernel_registry

HERE = os.path.dirname(__file__)

# op type -> the test that checks its gradient by finite differences
FD_GRADIENT_TESTED = {
    "If": "test_control_flow.py::test_cond_gradient_matches_finite_differences_on_both_sides",
    "While": "test_control_flow.py::test_while_gradient_matches_finite_differences",
    "LoopAccumulatorWrite": "test_control_flow_map.py::test_accumulator_ops_gradients_to_second_order",
    "LoopAccumulatorWriteGrad": "test_control_flow_map.py::test_accumulator_ops_gradients_to_second_order",
    "UnsortedSegmentSum": "test_segment_ops.py::test_segment_sums_match_numpy_and_gradient",
    "ScatterNd": "test_index_ops.py::test_scatter_nd_family_matches_tf_docs_and_gradient",
    "Tan": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Asin": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Acos": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Atan": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Sinh": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Cosh": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Asinh": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Acosh": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Atanh": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Expm1": "test_elementwise_math.py::test_unary_forward_and_finite_difference_gradients",
    "Atan2": "test_elementwise_math.py::test_atan2_broadcasts_and_its_gradient",
    "MatrixInverse": "test_linear_algebra.py::test_inverse_determinant_and_slogdet_gradients",
    "MatrixDeterminant": "test_linear_algebra.py::test_inverse_determinant_and_slogdet_gradients",
    "LogMatrixDeterminant": "test_linear_algebra.py::test_inverse_determinant_and_slogdet_gradients",
    "Cholesky": "test_linear_algebra.py::test_cholesky_and_logdet_gradients",
    "Qr": "test_linear_algebra.py::test_qr_gradient",
    "Svd": "test_linear_algebra.py::test_svd_gradient",
    "MatrixSquareRoot": "test_linear_algebra.py::test_matrix_square_root_forward_nan_and_gradient",
    "SelfAdjointEigV2": "test_linear_algebra.py::test_self_adjoint_eig_forward_and_gradient",
    "MatrixSolve": "test_linear_algebra.py::test_solve_and_triangular_solve_gradients",
    "MatrixTriangularSolve": "test_linear_algebra.py::test_solve_and_triangular_solve_gradients",
    "MatrixBandPart": "test_linear_algebra.py::test_structure_op_gradients",
    "MatrixDiag": "test_linear_algebra.py::test_structure_op_gradients",
    "MatrixDiagPart": "test_linear_algebra.py::test_structure_op_gradients",
    "MatrixSetDiag": "test_linear_algebra.py::test_structure_op_gradients",
    "Cross": "test_linear_algebra.py::test_structure_op_gradients",
    # special functions (ops/special_math_ops.py, ops/special_random_ops.py)
    "Erf": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "Erfc": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "Lgamma": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "Digamma": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "BesselI0e": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "BesselI1e": "test_special_math.py::test_unary_forward_float32_float64_and_finite_difference_gradients",
    "Polygamma": "test_special_math.py::test_polygamma_gradient_wrt_x_with_broadcasting",
    "Igamma": "test_special_math.py::test_igamma_gradients_wrt_a_and_x_with_broadcasting",
    "Igammac": "test_special_math.py::test_igamma_gradients_wrt_a_and_x_with_broadcasting",
    "Zeta": "test_special_math.py::test_zeta_gradient_wrt_q_and_betainc_gradient_wrt_x",
    "Betainc": "test_special_math.py::test_zeta_gradient_wrt_q_and_betainc_gradient_wrt_x",
    "NextAfter": "test_special_math.py::test_nextafter_gradient_is_one_and_zero",
    "CumulativeLogsumexp": "test_special_math.py::test_cumulative_logsumexp_gradient",
    "RandomGamma": "test_special_random.py::test_random_gamma_gradient_is_the_implicit_reparameterization",
    "Abs": "test_math_ops.py::test_unary_gradients",
    "Add": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "IdentityN": "test_custom_gradients.py::test_identity_n_values_and_finite_difference_gradient",
    "AddV2": "test_math_ops.py::test_add_v2_from_tensorflow_graphs_matches_numpy_and_finite_differences",
    "AddN": "test_gradient_coverage.py::test_add_n_gradient",
    "AvgPool": "test_conv_ops.py::test_pool_gradients_finite_differences",
    "AvgPoolGrad": "test_gradient_coverage.py::test_avg_pool_grad_gradient",
    "BiasAdd": "test_nn_ops.py::test_bias_add_forward_gradients_formats_and_errors",
    "BiasAddGrad": "test_gradient_coverage.py::test_bias_add_grad_gradient",
    "BooleanMask": "test_array_slicing.py::test_boolean_mask_and_reverse",
    "BooleanMaskGrad": "test_gradient_coverage.py::test_boolean_mask_grad_gradient",
    "BroadcastLike": "test_reduction_ops.py::test_clip_by_norm_and_global_norm",
    "Cast": "test_gradient_coverage.py::test_cast_gradient_float64_to_float32_and_back",
    "CheckNumerics": "test_numerics.py::test_check_numerics_gradient_by_finite_differences",
    "ConcatGrad": "test_gradient_coverage.py::test_concat_grad_gradient",
    "ConcatV2": "test_gradient_coverage.py::test_concat_grad_gradient",
    "Conv2D": "test_conv_ops.py::test_conv2d_gradients_finite_differences",
    "Conv2DBackpropFilter": "test_conv_ops.py::test_conv2d_transpose_and_backprop_gradients",
    "Conv2DBackpropInput": "test_conv_ops.py::test_conv2d_transpose_and_backprop_gradients",
    "Cos": "test_math_ops.py::test_unary_gradients",
    "Diag": "test_array_ops.py::test_eye_diag_einsum",
    "DiagPart": "test_array_ops.py::test_eye_diag_einsum",
    "DivNoNan": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Dropout": "test_gradient_coverage.py::test_dropout_gradient_by_finite_differences_with_a_fixed_seed",
    "DynamicSlice": "test_gradient_coverage.py::test_random_crop_gradient_and_second_order",
    "DynamicSliceGrad": "test_gradient_coverage.py::test_random_crop_gradient_and_second_order",
    "Einsum": "test_array_ops.py::test_eye_diag_einsum",
    "Elu": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "EluGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "Exp": "test_math_ops.py::test_unary_gradients",
    "ExpandDims": "test_array_ops.py::test_transpose_squeeze_expand_dims",
    "Fill": "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops",
    "FloorMod": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "GatherGrad": "test_gradient_coverage.py::test_gather_grad_gradient_with_repeated_indices",
    "GatherV2": "test_array_slicing.py::test_gather_axes_repeated_indices_and_errors",
    "Identity": "test_gradient_coverage.py::test_identity_and_placeholder_with_default_gradients",
    "L2Loss": "test_nn_ops.py::test_xw_plus_b_and_l2_loss",
    "LeakyRelu": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "LeakyReluGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "Log": "test_math_ops.py::test_unary_gradients",
    "Log1p": "test_math_ops.py::test_unary_gradients",
    "LogSoftmax": "test_nn_ops.py::test_softmax_family_axes_rank3_and_gradients",
    "LogSoftmaxGrad": "test_gradient_coverage.py::test_softmax_and_log_softmax_second_derivatives",
    "MatMul": "test_math_ops.py::test_add_n_accumulate_n_and_matmul_transposes",
    "Max": "test_reduction_ops.py::test_reduction_forward_shape_and_gradient",
    "MaxPool": "test_conv_ops.py::test_pool_gradients_finite_differences",
    "MaxPoolGrad": "test_gradient_coverage.py::test_max_pool_grad_and_max_pool_grad_grad_gradients",
    "MaxPoolGradGrad": "test_gradient_coverage.py::test_max_pool_grad_and_max_pool_grad_grad_gradients",
    "Maximum": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Mean": "test_reduction_ops.py::test_reduction_forward_shape_and_gradient",
    "MeanGrad": "test_gradient_coverage.py::test_mean_grad_and_reduction_grad_gradients",
    "Min": "test_reduction_ops.py::test_reduction_forward_shape_and_gradient",
    "Minimum": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "MirrorPad": "test_gradient_coverage.py::test_mirror_pad_forward_and_gradient",
    "MirrorPadGrad": "test_gradient_coverage.py::test_mirror_pad_forward_and_gradient",
    "Mul": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Neg": "test_math_ops.py::test_unary_gradients",
    "NnBroadcastChannel": "test_gradient_coverage.py::test_bias_add_grad_grad_nn_broadcast_channel_gradient",
    "NnFlatten": "test_gradient_coverage.py::test_layers_flatten_gradient_nn_flatten_and_reshape_like",
    "NnGather": "test_nn_ops.py::test_embedding_lookup_forward_gradient_and_errors",
    "IndexedSlicesToDense": "test_gradient_coverage.py::test_embedding_lookup_grad_gradient",
    "NnMoments": "test_nn_ops.py::test_moments_forward_and_gradients",
    "NnMomentsGrad": "test_gradient_coverage.py::test_moments_second_derivatives",
    "NnReshapeLike": "test_gradient_coverage.py::test_layers_flatten_gradient_nn_flatten_and_reshape_like",
    "Pack": "test_array_ops.py::test_join_split_gradients",
    "Pad": "test_array_slicing.py::test_pad_modes_shapes_and_gradient",
    "PlaceholderWithDefault": "test_gradient_coverage.py::test_reshape_like_gradient_on_a_partially_known_shape",
    "Pow": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Prod": "test_reduction_ops.py::test_reduction_forward_shape_and_gradient",
    "RealDiv": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Reciprocal": "test_math_ops.py::test_unary_gradients",
    "ReductionGrad": "test_gradient_coverage.py::test_mean_grad_and_reduction_grad_gradients",
    "Relu": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "Relu6": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "Relu6Grad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "ReluGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "Reshape": "test_array_ops.py::test_reshape_static_and_gradient",
    "ReshapeLike": "test_gradient_coverage.py::test_reshape_like_gradient_on_a_partially_known_shape",
    "ReverseSequence": "test_rnn_loops.py::test_reverse_sequence_forward_gradient_and_errors",
    "ReverseV2": "test_array_slicing.py::test_boolean_mask_and_reverse",
    "Rsqrt": "test_math_ops.py::test_unary_gradients",
    "Select": "test_reduction_ops.py::test_where_select_forms_and_gradient",
    "SelectV2": "test_reduction_ops.py::test_where_select_forms_and_gradient",
    "Sigmoid": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "SigmoidCrossEntropyWithLogits": "test_nn_ops.py::test_sigmoid_xent_forward_and_gradients",
    "SigmoidCrossEntropyWithLogitsGrad":
        "test_gradient_coverage.py::test_sigmoid_xent_second_derivatives_wrt_logits_and_labels",
    "SigmoidGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "Sin": "test_math_ops.py::test_unary_gradients",
    "Slice": "test_array_slicing.py::test_strided_slice_masks_and_slice",
    "Softmax": "test_nn_ops.py::test_softmax_family_axes_rank3_and_gradients",
    "SoftmaxCrossEntropyWithLogits": "test_nn_ops.py::test_softmax_xent_v1_labels_get_no_gradient_and_axis",
    "SoftmaxGrad": "test_gradient_coverage.py::test_softmax_and_log_softmax_second_derivatives",
    "Softplus": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "SoftplusGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "SparseSoftmaxCrossEntropyWithLogits": "test_nn_ops.py::test_sparse_softmax_xent_forward_gradient_and_dtype",
    "Split": "test_array_ops.py::test_join_split_gradients",
    "SplitV": "test_array_ops.py::test_join_split_gradients",
    "Sqrt": "test_math_ops.py::test_unary_gradients",
    "Square": "test_math_ops.py::test_unary_gradients",
    "SquaredDifference": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Squeeze": "test_array_ops.py::test_transpose_squeeze_expand_dims",
    "StridedSlice": "test_array_slicing.py::test_getitem_matches_numpy_with_static_shape_and_gradient",
    "StridedSliceGrad": "test_gradient_coverage.py::test_strided_slice_grad_gradient",
    "Sub": "test_math_ops.py::test_binary_gradients_with_broadcasting",
    "Sum": "test_reduction_ops.py::test_reduction_forward_shape_and_gradient",
    "SumToShapeOf": "test_gradient_coverage.py::test_sum_to_shape_of_and_broadcast_like_gradients",
    "Tanh": "test_nn_ops.py::test_activation_forward_dtype_and_gradient",
    "TanhGrad": "test_gradient_coverage.py::test_activation_second_derivatives",
    "Tile": "test_array_ops.py::test_tile",
    "TileGrad": "test_gradient_coverage.py::test_tile_grad_gradient",
    "Transpose": "test_array_ops.py::test_transpose_squeeze_expand_dims",
    "Unpack": "test_array_ops.py::test_join_split_gradients",
    "XentLabelsGrad": "test_gradient_coverage.py::test_softmax_xent_second_derivatives_wrt_logits_and_labels",
    "XentScaleAlongAxis": "test_gradient_coverage.py::test_sparse_softmax_xent_second_derivative",
    # batch matmul, scans and top_k, gather_nd, Print
    "BatchMatMulV2": "test_linear_algebra.py::test_matmul_on_batches_broadcasts_like_numpy_and_gradient",
    "Cumprod": "test_scan_sort_ops.py::test_cumsum_cumprod_forward_and_gradients",
    "Cumsum": "test_scan_sort_ops.py::test_cumsum_cumprod_forward_and_gradients",
    "GatherNd": "test_index_ops.py::test_gather_nd_forward_errors_and_gradients",
    "GatherNdGrad": "test_index_ops.py::test_gather_nd_forward_errors_and_gradients",
    "Print": "test_check_ops.py::test_print_is_an_identity_that_writes_to_stderr_and_its_gradient",
    "PutAlongLastAxis": "test_scan_sort_ops.py::test_top_k_forward_ties_shapes_and_gradient_to_the_values_positions",
    "TakeAlongLastAxis": "test_scan_sort_ops.py::test_top_k_forward_ties_shapes_and_gradient_to_the_values_positions",
    "TopKV2": "test_scan_sort_ops.py::test_top_k_forward_ties_shapes_and_gradient_to_the_values_positions",
    # partition / stitch (ops/partition_stitch_ops.py)
    "DynamicPartition": "test_partition_stitch.py::test_dynamic_partition_gradient_by_finite_differences",
    "DynamicStitch": "test_partition_stitch.py::test_dynamic_stitch_gradients_by_finite_differences",
    "ParallelDynamicStitch": "test_partition_stitch.py::test_dynamic_stitch_gradients_by_finite_differences",
    # segment max / min / prod (ops/segment_ops.py); the tie split: test_segment_ops.py's tie test
    "SegmentMax": "test_segment_ops.py::test_gradients_match_finite_differences",
    "SegmentMin": "test_segment_ops.py::test_gradients_match_finite_differences",
    "SegmentProd": "test_segment_ops.py::test_gradients_match_finite_differences",
    "UnsortedSegmentMax": "test_segment_ops.py::test_gradients_match_finite_differences",
    "UnsortedSegmentMin": "test_segment_ops.py::test_gradients_match_finite_differences",
    "UnsortedSegmentProd": "test_segment_ops.py::test_gradients_match_finite_differences",
    "ResizeBilinear": "test_image_resize.py::test_resize_gradients_by_finite_differences",
    "ResizeBicubic": "test_image_resize.py::test_resize_gradients_by_finite_differences",
    "ResizeNearestNeighbor": "test_image_resize.py::test_resize_gradients_by_finite_differences",
}

_OPT = "stateful optimizer update of a variable (no gradient, as in TF)"
_BOOL = "bool output"
_RANDOM = "random draws: no differentiable input"
_STR = "string input or output (not differentiable, as in TF)"
# op type -> (why it has no gradient, the test that checks its forward)
FORWARD_ONLY = {
    "All": (_BOOL, "test_reduction_ops.py::test_int_and_bool_reductions_keep_dtype"),
    "Any": (_BOOL, "test_reduction_ops.py::test_int_and_bool_reductions_keep_dtype"),
    "ApplyAdagrad": (_OPT, "test_optimizers.py::test_adagrad_matches_numpy"),
    "ApplyAdam": (_OPT, "test_optimizers.py::test_adam_matches_numpy_and_beta_powers"),
    "ApplyCenteredRMSProp": (_OPT, "test_optimizers.py::test_rmsprop_matches_numpy"),
    "ApplyGradientDescent": (_OPT, "test_optimizers.py::test_gradient_descent_matches_numpy"),
    "ApplyMomentum": (_OPT, "test_optimizers.py::test_momentum_matches_numpy"),
    "ApplyRMSProp": (_OPT, "test_optimizers.py::test_rmsprop_matches_numpy"),
    "ApplyAdadelta": (_OPT, "test_optimizers_proximal_adadelta.py::test_dense_updates_match_tf_kernel_formulas"),
    "ApplyProximalGradientDescent": (_OPT,
                                     "test_optimizers_proximal_adadelta.py::test_dense_updates_match_tf_kernel_formulas"),
    "ApplyProximalAdagrad": (_OPT, "test_optimizers_proximal_adadelta.py::test_dense_updates_match_tf_kernel_formulas"),
    "ApplyAdagradDA": (_OPT, "test_optimizers_proximal_adadelta.py::"
                             "test_adagrad_da_matches_tf_kernel_formula_with_the_global_step"),
    "ArgMax": ("integer output", "test_reduction_ops.py::test_argmax_argmin"),
    "ArgMin": ("integer output", "test_reduction_ops.py::test_argmax_argmin"),
    "Assign": ("stateful variable write", "test_state_ops.py::test_assign_assign_add_assign_sub_values_and_dtypes"),
    "AssignAdd": ("stateful variable write",
                  "test_state_ops.py::test_assign_assign_add_assign_sub_values_and_dtypes"),
    "AssignSub": ("stateful variable write",
                  "test_state_ops.py::test_assign_assign_add_assign_sub_values_and_dtypes"),
    "Ceil": ("piecewise constant: zero gradient a.e. (TF: None)", "test_math_ops.py::test_unary_forward_matches_numpy"),
    "Const": ("a constant: no inputs", "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops"),
    "Equal": (_BOOL, "test_reduction_ops.py::test_comparisons_broadcast_to_bool"),
    "Floor": ("piecewise constant: zero gradient a.e. (TF: None)",
              "test_math_ops.py::test_unary_forward_matches_numpy"),
    "FloorDiv": ("piecewise constant: zero gradient a.e. (TF: None)",
                 "test_math_ops.py::test_binary_forward_broadcasting_matches_numpy"),
    "Greater": (_BOOL, "test_reduction_ops.py::test_comparisons_broadcast_to_bool"),
    "GreaterEqual": (_BOOL, "test_reduction_ops.py::test_comparisons_broadcast_to_bool"),
    "InTopK": (_BOOL, "test_nn_ops.py::test_in_top_k_matches_numpy_with_ties"),
    "IsFinite": (_BOOL, "test_reduction_ops.py::test_equal_on_bool_and_is_nan_family"),
    "IsInf": (_BOOL, "test_reduction_ops.py::test_equal_on_bool_and_is_nan_family"),
    "IsNan": (_BOOL, "test_reduction_ops.py::test_equal_on_bool_and_is_nan_family"),
    "IsVariableInitialized": (_BOOL, "test_state_ops.py::test_is_variable_initialized_before_and_after_init"),
    "InitializedValue": ("reads session state (a variable or its initial value)",
                         "test_value_lifetimes.py::test_initialized_value_chains_variable_initialization"),
    "Less": (_BOOL, "test_reduction_ops.py::test_comparisons_broadcast_to_bool"),
    "LessEqual": (_BOOL, "test_reduction_ops.py::test_comparisons_broadcast_to_bool"),
    "LinSpace": ("static attrs only: no inputs", "test_array_ops.py::test_range_and_linspace"),
    "LogicalAnd": (_BOOL, "test_math_ops.py::test_logical_operators_on_bool"),
    "LogicalNot": (_BOOL, "test_math_ops.py::test_logical_operators_on_bool"),
    "LogicalOr": (_BOOL, "test_math_ops.py::test_logical_operators_on_bool"),
    "Multinomial": (_RANDOM + " (integer samples)", "test_random_ops.py::test_shuffle_multinomial_crop"),
    "RandomPoissonV2": (_RANDOM + " (integer-valued samples; TF registers no gradient)",
                        "test_special_random.py::test_poisson_moments"),
    "NoOp": ("no outputs", "test_core_smoke.py::test_linear_model_values_and_gradients_match_numpy"),
    "NotEqual": (_BOOL, "test_reduction_ops.py::test_equal_on_bool_and_is_nan_family"),
    "OneHot": ("integer indices input", "test_array_slicing.py::test_one_hot"),
    "OnesLike": ("output does not depend on the input's values",
                 "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops"),
    "Placeholder": ("a fed source",
                    "test_error_messages.py::test_feeding_a_wrong_shape_names_the_placeholder_and_both_shapes"),
    "RandomOrthogonal": (_RANDOM, "test_init_ops.py::test_random_initializer_statistics"),
    "RandomShuffle": ("random permutation (TF: NotDifferentiable)",
                      "test_random_ops.py::test_shuffle_multinomial_crop"),
    "RandomStandardNormal": (_RANDOM, "test_random_ops.py::test_distributions_shapes_dtypes_and_moments"),
    "RandomUniform": (_RANDOM, "test_random_ops.py::test_distributions_shapes_dtypes_and_moments"),
    "RandomUniformInt": (_RANDOM, "test_random_ops.py::test_distributions_shapes_dtypes_and_moments"),
    "Range": ("static attrs only: no inputs", "test_array_ops.py::test_range_and_linspace"),
    "Rank": ("int32 output", "test_array_ops.py::test_rank_op_on_an_unknown_rank_placeholder"),
    "Round": ("piecewise constant: zero gradient a.e. (TF: None)",
              "test_math_ops.py::test_unary_forward_matches_numpy"),
    "Shape": ("integer output", "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops"),
    "Sign": ("piecewise constant: zero gradient a.e.", "test_math_ops.py::test_unary_forward_matches_numpy"),
    "Size": ("integer output", "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops"),
    "StopGradient": ("blocks gradients by definition",
                     "test_nn_ops.py::test_softmax_xent_v1_labels_get_no_gradient_and_axis"),
    "TruncatedNormal": (_RANDOM, "test_random_ops.py::test_distributions_shapes_dtypes_and_moments"),
    "VariableV2": ("a stateful source: gradients are taken with respect to it",
                   "test_core_smoke.py::test_linear_model_values_and_gradients_match_numpy"),
    "Where": ("int64 coordinates output", "test_reduction_ops.py::test_where_coordinates_int64"),
    "ZerosLike": ("output does not depend on the input's values",
                  "test_array_ops.py::test_fill_zeros_ones_like_and_shape_ops"),
    # asserts, scatter_update / add / sub, sequence_mask
    "Assert": ("no outputs: a run-time check", "test_check_ops.py::test_binary_and_sign_asserts_and_summarize"),
    "ScatterUpdate": ("stateful variable write",
                      "test_scatter_ops.py::test_scatter_ops_update_the_variable_like_numpy"),
    "ScatterAdd": ("stateful variable write", "test_scatter_ops.py::test_scatter_ops_update_the_variable_like_numpy"),
    "ScatterSub": ("stateful variable write", "test_scatter_ops.py::test_scatter_ops_update_the_variable_like_numpy"),
    "SequenceMask": (_BOOL, "test_index_ops.py::test_sequence_mask_matches_numpy"),
    # ops/scatter_ops.py, tf.count_up_to (ops/state_ops.py) and ops/search_histogram_ops.py
    "ScatterMul": ("stateful variable write",
                   "test_scatter_ops.py::test_scatter_combine_ops_match_numpy_ufunc_at_with_repeated_indices"),
    "ScatterDiv": ("stateful variable write",
                   "test_scatter_ops.py::test_scatter_combine_ops_match_numpy_ufunc_at_with_repeated_indices"),
    "ScatterMin": ("stateful variable write",
                   "test_scatter_ops.py::test_scatter_combine_ops_match_numpy_ufunc_at_with_repeated_indices"),
    "ScatterMax": ("stateful variable write",
                   "test_scatter_ops.py::test_scatter_combine_ops_match_numpy_ufunc_at_with_repeated_indices"),
    "ScatterNdUpdate": ("stateful variable write",
                        "test_scatter_ops.py::test_scatter_nd_ops_match_numpy_on_slices_with_repeated_indices"),
    "ScatterNdAdd": ("stateful variable write",
                     "test_scatter_ops.py::test_scatter_nd_ops_match_numpy_on_slices_with_repeated_indices"),
    "ScatterNdSub": ("stateful variable write",
                     "test_scatter_ops.py::test_scatter_nd_ops_match_numpy_on_slices_with_repeated_indices"),
    "CountUpTo": ("stateful variable write (integer counter)",
                  "test_state_ops.py::test_count_up_to_counts_then_raises_out_of_range"),
    "LowerBound": ("integer output", "test_search_histogram.py::test_searchsorted_matches_tf_docs_and_numpy_per_row"),
    "UpperBound": ("integer output", "test_search_histogram.py::test_searchsorted_matches_tf_docs_and_numpy_per_row"),
    "UnravelIndex": ("integer output",
                     "test_search_histogram.py::test_unravel_index_matches_tf_docs_numpy_and_errors"),
    "HistogramFixedWidth": ("integer counts", "test_search_histogram.py::test_histograms_match_tf_docs_and_a_bin_loop"),
    # summary ops: a serialized Summary proto out (a string), no gradient in TF
    "ScalarSummary": ("string output", "test_summary_ops.py::test_scalar_value_tag_and_collection"),
    "HistogramSummary": ("string output", "test_summary_ops.py::test_histogram_buckets_and_moments_against_numpy"),
    "ImageSummary": ("string output", "test_summary_ops.py::test_float_images_are_scaled_per_image_as_tf"),
    "AudioSummaryV2": ("string output", "test_summary_ops.py::test_audio_is_16_bit_wav"),
    "TensorSummaryV2": ("string output", "test_summary_writer.py::test_tensor_summary_of_numbers"),
    "MergeSummary": ("string output", "test_summary_ops.py::test_merge_and_merge_all"),
    # string ops (ops/string_ops.py): strings are not differentiable
    "AsString": (_STR, "test_string_ops.py::test_as_string_printf_semantics"),
    "StringJoin": (_STR, "test_string_ops.py::test_string_join_broadcasts_scalars_like_python_join"),
    "ReduceJoin": (_STR, "test_string_ops.py::test_reduce_join_matches_tf_docs"),
    "StringSplit": (_STR, "test_string_ops.py::test_string_split_v1_dense_form_matches_tf_docs"),
    "StringSplitV2": (_STR, "test_string_ops.py::test_strings_split_follows_python_str_split"),
    "SparseToDense": ("dense form of string_split (no gradient here)",
                      "test_string_ops.py::test_string_split_v1_dense_form_matches_tf_docs"),
    "DecodeRaw": (_STR, "test_string_ops.py::test_decode_raw_matches_struct_and_checks_sizes"),
    "DecodeCSV": (_STR, "test_string_ops.py::test_decode_csv_types_defaults_quotes_and_errors"),
    "StringToNumber": (_STR, "test_string_ops.py::test_string_to_number_length_strip_substr_regex"),
    "StringLength": (_STR, "test_string_ops.py::test_string_to_number_length_strip_substr_regex"),
    "StringStrip": (_STR, "test_string_ops.py::test_string_to_number_length_strip_substr_regex"),
    "Substr": (_STR, "test_string_ops.py::test_string_to_number_length_strip_substr_regex"),
    "RegexReplace": (_STR, "test_string_ops.py::test_string_to_number_length_strip_substr_regex"),
    "PrintV2": ("no outputs: prints", "test_string_ops.py::test_tf_print_renders_strings_and_tensors"),
    "Rint": ("piecewise constant: zero gradient a.e. (TF: None)",
             "test_elementwise_math.py::test_rint_rounds_half_to_even_and_has_no_gradient"),
    "PyFunc": ("runs Python: no gradient (as tf.py_func)",
               "test_host_ops.py::test_py_func_runs_python_on_the_values"),
    "ParseExample": ("parses serialized protos: no differentiable input",
                     "test_tfrecord_data.py::test_parse_example_batch_matches_the_rows"),
    "ParseSequenceExample": ("parses serialized protos: no differentiable input",
                             "test_sequence_parsing.py::test_batched_sequence_examples_are_padded_with_lengths"),
    "CandidateSampler": (_RANDOM + " (integer candidates)",
                         "test_candidate_sampling.py::test_log_uniform_sampler_follows_zipf_and_reports_expected_counts"),
    "Unique": ("integer indices and values picked out (TF: no gradient)",
               "test_set_ops.py::test_unique_matches_tf_docs"),
    "InvertPermutation": ("integer output", "test_index_ops.py::test_invert_permutation_matches_tf_docs"),
    "Bincount": ("counts of integer input",
                 "test_search_histogram.py::test_bincount_and_confusion_matrix_match_tf_docs"),
    "SetDiff1d": ("set difference: values picked out (TF: no gradient)",
                  "test_set_ops.py::test_setdiff1d_matches_tf_docs"),
    "Timestamp": ("no inputs: the clock", "test_host_ops.py::test_timestamp_reads_the_clock"),
    # tf.data iterators (data/iterator_ops.py)
    "MakeIterator": ("no outputs: starts an iterator",
                     "test_data.py::test_initializable_iterator_with_fed_placeholder_and_reinit"),
    "IteratorGetNext": ("a stateful source: the input pipeline's elements",
                        "test_data.py::test_from_tensor_slices_tuple_dict_and_specs"),
    "IteratorToStringHandle": ("a string naming an iterator",
                               "test_data.py::test_feedable_iterator_switches_by_string_handle"),
    "IteratorFromStringHandleGetNext": ("a stateful source: the fed iterator's elements",
                                        "test_data.py::test_feedable_iterator_switches_by_string_handle"),
}

# queue and accumulator ops (tf.FIFOQueue & co, tf.ConditionalAccumulator): stateful, no gradient, as in TF
_QUEUE = "queue/accumulator resource op (stateful, no gradient, as in TF)"
_QT = "test_train_loop_queues.py::"
_ST = "test_sync_replicas_local.py::"
_SPARSE = "test_sparse_accumulator_averages_each_row_over_the_gradients_that_had_it"
FORWARD_ONLY.update({
    "QueueHandle": (_QUEUE, _QT + "test_fifo_order_size_and_closed_empty_raises_out_of_range"),
    "QueueEnqueue": (_QUEUE, _QT + "test_fifo_order_size_and_closed_empty_raises_out_of_range"),
    "QueueEnqueueMany": (_QUEUE, _QT + "test_dequeue_many_and_up_to_on_closed_queue"),
    "QueueDequeue": (_QUEUE, _QT + "test_fifo_order_size_and_closed_empty_raises_out_of_range"),
    "QueueDequeueMany": (_QUEUE, _QT + "test_dequeue_many_and_up_to_on_closed_queue"),
    "QueueDequeueUpTo": (_QUEUE, _QT + "test_dequeue_many_and_up_to_on_closed_queue"),
    "QueueClose": (_QUEUE, _QT + "test_close_without_cancel_lets_pending_enqueue_finish_with_cancel_fails_it"),
    "QueueSize": (_QUEUE, _QT + "test_fifo_order_size_and_closed_empty_raises_out_of_range"),
    "QueueIsClosed": (_QUEUE, _QT + "test_fifo_order_size_and_closed_empty_raises_out_of_range"),
    "AccumulatorHandle": (_QUEUE, _QT + "test_conditional_accumulator_averages_and_drops_stale"),
    "AccumulatorApplyGradient": (_QUEUE, _QT + "test_conditional_accumulator_averages_and_drops_stale"),
    "AccumulatorTakeGradient": (_QUEUE, _QT + "test_conditional_accumulator_averages_and_drops_stale"),
    "AccumulatorNumAccumulated": (_QUEUE, _QT + "test_conditional_accumulator_averages_and_drops_stale"),
    "AccumulatorSetGlobalStep": (_QUEUE, _QT + "test_conditional_accumulator_averages_and_drops_stale"),
    "AccumulatorNumDropped": (_QUEUE, _ST + "test_set_global_step_sets_even_a_smaller_step_and_drops_are_counted"),
    "AccumulatorCancelTakes": (_QUEUE, _ST + "test_cancel_takes_fails_a_blocked_take_until_the_next_set_global_step"),
    "SparseAccumulatorApplyGradient": (_QUEUE, _ST + _SPARSE),
    "SparseAccumulatorTakeGradient": (_QUEUE, _ST + _SPARSE),
})

# readers and file ops of queue-based input pipelines (tf.TFRecordReader & co, tf.read_file): strings, stateful
_READER = "reader/file op (string outputs, stateful, no gradient, as in TF)"
_RT = "test_queue_input_pipelines.py::"
_WHOLE = "test_whole_file_identity_reader_counters_reset_and_read_up_to"
_FILES = "test_limit_epochs_match_filenames_once_and_file_ops"
FORWARD_ONLY.update({
    "ReaderHandle": (_READER, _RT + "test_string_input_producer_tfrecord_reader_batch_in_order_each_epoch"),
    "ReaderRead": (_READER, _RT + "test_string_input_producer_tfrecord_reader_batch_in_order_each_epoch"),
    "ReaderReadUpTo": (_READER, _RT + _WHOLE),
    "ReaderNumRecordsProduced": (_READER, _RT + _WHOLE),
    "ReaderNumWorkUnitsCompleted": (_READER, _RT + _WHOLE),
    "ReaderReset": (_READER, _RT + _WHOLE),
    "ReadFile": (_READER, _RT + _FILES),
    "WriteFile": (_READER, _RT + _FILES),
    "MatchingFiles": (_READER, _RT + _FILES),
})
_CODEC = "image bytes in or out (string: not differentiable, as in TF)"
FORWARD_ONLY.update({
    "DecodeJpeg": (_CODEC,
                   "test_image_codecs.py::test_decode_jpeg_is_bit_exact_with_tfs_accurate_dct_and_close_to_its_default"),
    "DecodePng": (_CODEC, "test_image_codecs.py::test_decode_png_channels_and_dtypes_as_tf"),
    "DecodeBmp": (_CODEC, "test_image_codecs.py::test_decode_gif_frames_and_bmp_give_the_drawn_pixels"),
    "DecodeGif": (_CODEC, "test_image_codecs.py::test_decode_gif_frames_and_bmp_give_the_drawn_pixels"),
    "DecodeImage": (_CODEC, "test_image_codecs.py::test_decode_image_detects_the_format_and_converts_dtype"),
    "EncodeJpeg": (_CODEC, "test_image_codecs.py::test_encode_jpeg_defaults_and_options"),
    "EncodePng": (_CODEC, "test_image_codecs.py::test_encode_png_round_trips_every_channel_count"),
    "ExtractJpegShape": (_CODEC, "test_image_codecs.py::test_encode_jpeg_defaults_and_options"),
    "ResizeArea": ("TF registers no gradient for it (tensorfleet: None rather than TF's LookupError)",
                   "test_image_resize.py::test_resize_images_matches_tensorflow"),
})

# op type -> (what it is, the test that covers it)
INTERNAL_HELPERS = {
    "IgammaGradA": ("d/da igamma(a, x) in Igamma's gradient (no gradient of its own, as in TF)",
                    "test_special_math.py::test_igamma_grad_a_matches_finite_differences_of_scipy_across_regimes"),
    "RandomGammaGrad": ("d sample / d alpha in RandomGamma's gradient (no gradient of its own, as in TF)",
                        "test_special_random.py::test_random_gamma_grad_kernel_in_the_tails"),
    # KNOWN GAP: marked NotDifferentiable, so second derivatives through tf.while_loop are not available.
    "WhileGrad": ("tf.while_loop's gradient op; no second derivative (NotDifferentiable)",
                  "test_control_flow.py::test_while_gradient_matches_finite_differences"),
    "NnShape": ("int32 runtime shape for the conv gradients (NotDifferentiable)",
                "test_conv_ops.py::test_conv2d_gradient_with_unknown_batch_uses_runtime_shape"),
    # KNOWN GAP: marked NotDifferentiable, so second derivatives of reduce_prod are silently zero.
    "ProdGrad": ("reduce_prod's gradient op; no second derivative (NotDifferentiable)",
                 "test_reduction_ops.py::test_prod_gradient_with_zeros"),
    "ResizeBilinearGrad": ("resize_bilinear's gradient op (TF's; no second derivative, as in TF)",
                           "test_image_resize.py::test_resize_gradients_match_tensorflow"),
    "ResizeBicubicGrad": ("resize_bicubic's gradient op (TF's; no second derivative, as in TF)",
                          "test_image_resize.py::test_resize_gradients_match_tensorflow"),
    "ResizeNearestNeighborGrad": ("resize_nearest_neighbor's gradient op (TF's; no second derivative, as in TF)",
                                  "test_image_resize.py::test_resize_gradients_match_tensorflow"),
}

LISTS = {"FD_GRADIENT_TESTED": FD_GRADIENT_TESTED, "FORWARD_ONLY": FORWARD_ONLY,
         "INTERNAL_HELPERS": INTERNAL_HELPERS}


def _runtime_op_types():
    """The op types tensorfleet registers (test modules register scratch ops such as test_executor's TestRecord)."""
    return sorted(t for t in op_registry.registered_op_types()
                  if getattr(op_registry.get_op_def(t).shape_fn, "__module__", "").startswith("tensorfleet."))


def _test_ref(entry):
    return entry if isinstance(entry, str) else entry[1]


_FUNCS = {}


def _test_functions(filename):
    if filename not in _FUNCS:
        with open(os.path.join(HERE, filename)) as f:
            tree = ast.parse(f.read())
        _FUNCS[filename] = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    return _FUNCS[filename]


def test_every_registered_op_type_is_in_exactly_one_list():
    registered = set(_runtime_op_types())
    seen = {}
    for list_name, ops in LISTS.items():
        for op in ops:
            assert op not in seen, f"{op} is in both {seen[op]} and {list_name}"
            seen[op] = list_name
    missing = sorted(registered - set(seen))
    stale = sorted(set(seen) - registered)
    assert not missing, (f"op types with no test decision: {missing} -- add each to FD_GRADIENT_TESTED (with its "
                         f"finite-difference test), FORWARD_ONLY (reason + forward test) or INTERNAL_HELPERS")
    assert not stale, f"listed op types that are not registered: {stale}"


def test_every_op_has_a_cpu_kernel():
    have = {op for op, dev in kernel_registry._KERNELS if dev == "CPU"}
    assert not sorted(set(_runtime_op_types()) - have)


def test_list_membership_matches_the_registry():
    for op in FD_GRADIENT_TESTED:
        op_def = op_registry.get_op_def(op)
        assert op_def.grad_fn is not None and not op_def.not_differentiable, f"{op} has no registered gradient"
    for op in list(FORWARD_ONLY) + list(INTERNAL_HELPERS):
        op_def = op_registry.get_op_def(op)
        assert op_def.grad_fn is None and op_def.not_differentiable, \
            f"{op} must be marked NotDifferentiable (or have a gradient and an FD test)"


def test_no_op_is_neither_differentiable_nor_marked_not_differentiable():
    """'Neither' makes tf.gradients raise LookupError on any graph through the op."""
    neither = [t for t in _runtime_op_types()
               if op_registry.get_op_def(t).grad_fn is None and not op_registry.get_op_def(t).not_differentiable]
    assert not neither


@pytest.mark.parametrize("list_name", sorted(LISTS))
def test_referenced_tests_exist(list_name):
    for op, entry in LISTS[list_name].items():
        filename, func = _test_ref(entry).split("::")
        assert func in _test_functions(filename), f"{list_name}[{op!r}] names a missing test {filename}::{func}"
        if list_name != "FD_GRADIENT_TESTED":
            assert entry[0], f"{op}: give the reason"


def test_fd_references_really_use_finite_differences():
    for op, ref in FD_GRADIENT_TESTED.items():
        filename, func = ref.split("::")
        node = _test_functions(filename)[func]
        called = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert called & {"check_gradients", "_check_vjp", "check_gradients_fresh_sessions", "numeric_grad"}, \
            f"{ref} (listed for {op}) calls no finite-difference oracle"

