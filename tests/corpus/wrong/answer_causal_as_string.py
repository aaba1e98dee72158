"""Answers with the string 'False' instead of the bool."""

REPLACE = {
    'SELF_ATTENTION_IS_CAUSAL': "SELF_ATTENTION_IS_CAUSAL = 'False'",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'SELF_ATTENTION_IS_CAUSAL': ['check_answer_self_attention_is_causal'],
}
