"""BERT encoders (Devlin et al., 2019): BERT-S (small) and BERT-L (large).

Sizes: ``bert_s`` is Google's BERT-Small (Turc et al., 2019, "Well-Read
Students Learn Better": L=4 layers, H=512, A=8 heads, feed-forward 2048);
``bert_l`` is BERT-Large (L=24, H=1024, A=16, feed-forward 4096). Both
default to 128 tokens (``input_size``, the sequence length). Only the encoder stack is built: the embedding lookup
(a gather, no arithmetic) is taken as the graph input ``(H, tokens, 1)`` and
the task head is left out.

One encoder layer: Q, K, V projections (``linear``), scores ``Q K^T`` per
head (``matmul``, tokens^2 x H MACs), softmax, context ``P V`` (``matmul``),
output projection, residual add + layer norm, the feed-forward pair with GELU,
residual add + layer norm.
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# (layers, hidden, heads, feed-forward)
_SIZES = {"bert_s": (4, 512, 8, 2048), "bert_l": (24, 1024, 16, 4096)}


def encoder_layer(g: Graph, x: str, hidden: int, heads: int, ffn: int, name: str) -> str:
    """One transformer encoder layer on ``(hidden, tokens, 1)``."""
    tokens = g.shape(x)[1]
    q = g.linear(x, hidden, name=f"{name}.attn.q")
    k = g.linear(x, hidden, name=f"{name}.attn.k")
    v = g.linear(x, hidden, name=f"{name}.attn.v")
    scores = g.matmul(q, k, (heads * tokens, tokens, 1), tokens * tokens * hidden,
                      name=f"{name}.attn.scores")
    probs = g.softmax(scores, name=f"{name}.attn.softmax")
    context = g.matmul(probs, v, (hidden, tokens, 1), tokens * tokens * hidden,
                       name=f"{name}.attn.context")
    out = g.linear(context, hidden, name=f"{name}.attn.out")
    x = g.layernorm(g.add(out, x, name=f"{name}.attn.add"), name=f"{name}.attn.norm")
    y = g.gelu(g.linear(x, ffn, name=f"{name}.ffn.up"), name=f"{name}.ffn.gelu")
    y = g.linear(y, hidden, name=f"{name}.ffn.down")
    return g.layernorm(g.add(y, x, name=f"{name}.ffn.add"), name=f"{name}.ffn.norm")


def build_bert(name: str, input_size: int = 128) -> Graph:
    """Build the encoder stack of ``bert_s`` or ``bert_l`` for ``input_size`` tokens."""
    seq_len = positive_int("input_size", input_size, name)
    layers, hidden, heads, ffn = _SIZES[name]
    g = Graph(name, (hidden, seq_len, 1),
              {"input_size": seq_len, "layers": layers, "hidden": hidden, "heads": heads,
               "ffn": ffn})
    x = g.input
    for index in range(layers):
        x = encoder_layer(g, x, hidden, heads, ffn, f"layer{index}")
    return g


@MODELS.register("bert_s")
def bert_s(input_size: int = 128) -> Graph:
    """BERT-Small encoder (L=4, H=512, A=8): 12.6 M parameters, 1.68 GMACs at 128 tokens.

    Args:
        input_size: tokens (the sequence length).
    """
    return build_bert("bert_s", input_size)


@MODELS.register("bert_l")
def bert_l(input_size: int = 128) -> Graph:
    """BERT-Large encoder (L=24, H=1024, A=16): 302 M parameters, 39.5 GMACs at 128 tokens.

    Args:
        input_size: tokens (the sequence length).
    """
    return build_bert("bert_l", input_size)
