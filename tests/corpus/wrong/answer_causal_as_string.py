"""Answers with the string 'False' instead of the bool."""

REPLACE = {
    'SELF_ATTENTION_IS_CAUSAL': "SELF_ATTENTION_IS_CAUSAL = 'False'",
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'SELF_ATTENTION_IS_CAUSAL': ['check_answer_self_attention_is_causal'],
}
