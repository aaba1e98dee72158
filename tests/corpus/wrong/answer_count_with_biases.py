"""Counts biases: 330."""

REPLACE = {
    'QKV_PARAM_COUNT': 'QKV_PARAM_COUNT = 330',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'QKV_PARAM_COUNT': ['check_answer_qkv_param_count'],
}
