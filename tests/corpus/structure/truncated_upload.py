"""The upload stopped half way."""

def build(nb, text):
    return text.encode()[: len(text) // 2]

EXPECT = {'status': 'invalid', 'reason': 'not valid JSON'}
