"""causal_mask was pasted into a markdown cell, so it never runs."""

def build(nb, text):
    for c in nb["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "causal_mask":
            c["cell_type"] = "markdown"
            c.pop("outputs", None)
            c.pop("execution_count", None)
    return dumps(nb)

EXPECT = {'status': 'graded', 'missing': ['causal_mask'], 'lost': ['causal_mask', 'masked_self_attention']}
