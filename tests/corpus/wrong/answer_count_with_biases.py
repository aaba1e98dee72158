"""Counts biases: 330."""

REPLACE = {
    'QKV_PARAM_COUNT': 'QKV_PARAM_COUNT = 330',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'QKV_PARAM_COUNT': ['check_answer_qkv_param_count'],
}
