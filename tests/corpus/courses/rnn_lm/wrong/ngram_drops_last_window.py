"""Off by one: the last n-gram of the corpus is not counted."""

REPLACE = {
    'ngram_probs': 'def ngram_probs(tokens, n):\n    counts = {}\n    for i in range(len(tokens) - n):\n        context, word = tuple(tokens[i:i + n - 1]), tokens[i + n - 1]\n        counts.setdefault(context, {})\n        counts[context][word] = counts[context].get(word, 0) + 1\n    return {ctx: {w: k / sum(following.values()) for w, k in following.items()} for ctx, following in counts.items()}',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'ngram_probs': ['check_ngram_probs_matches_counts'],
}
