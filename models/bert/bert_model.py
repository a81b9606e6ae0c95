"""A plain-torch BERT encoder that satisfies the counterpoint TorchScript contract:

    forward(input_ids int64 [B, T], attention_mask int64 [B, T])
        -> (token_states float [B, T, H] (last layer), pooled float [B, H])

The arithmetic follows Hugging Face's BertModel in eval mode with token type ids 0, so weights
map one to one. `pooled` is the manifest's pooling applied here too ("cls": the first token's
state, "mean": the masked mean), left unnormalised; the library normalises. Every weight is an
nn.Parameter, so the scripted module can be fine-tuned.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")
POOLINGS = ("cls", "mean")


@dataclass
class BertConfig:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int = 2
    hidden_act: str = "gelu"
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1

    @staticmethod
    def from_hf(config):
        """From a config.json dict; ValueError naming the field on anything unsupported."""
        missing = [k for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                               "intermediate_size", "max_position_embeddings") if k not in config]
        if missing:
            raise ValueError(f"config.json lacks {', '.join(missing)}")
        act = config.get("hidden_act", "gelu")
        if act not in ACTIVATIONS:
            raise ValueError(f"config.json hidden_act '{act}' is not supported (expected one of "
                             f"{', '.join(ACTIVATIONS)})")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"config.json position_embedding_type "
                             f"'{config['position_embedding_type']}' is not supported (only 'absolute')")
        result = BertConfig(
            vocab_size=int(config["vocab_size"]), hidden_size=int(config["hidden_size"]),
            num_hidden_layers=int(config["num_hidden_layers"]),
            num_attention_heads=int(config["num_attention_heads"]),
            intermediate_size=int(config["intermediate_size"]),
            max_position_embeddings=int(config["max_position_embeddings"]),
            type_vocab_size=int(config.get("type_vocab_size", 2)), hidden_act=act,
            layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
            hidden_dropout_prob=float(config.get("hidden_dropout_prob", 0.1)),
            attention_probs_dropout_prob=float(config.get("attention_probs_dropout_prob", 0.1)))
        if result.hidden_size % result.num_attention_heads:
            raise ValueError(f"config.json hidden_size {result.hidden_size} is not a multiple of "
                             f"num_attention_heads {result.num_attention_heads}")
        return result


class BertLayer(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        h = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = h // config.num_attention_heads
        self.activation = config.hidden_act
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)
        self.attention_output = nn.Linear(h, h)
        self.attention_norm = nn.LayerNorm(h, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(h, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, h)
        self.output_norm = nn.LayerNorm(h, eps=config.layer_norm_eps)
        self.attention_dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.hidden_dropout = nn.Dropout(config.hidden_dropout_prob)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.size(0), x.size(1)
        return x.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def _activate(self, x: torch.Tensor) -> torch.Tensor:
        if self.activation == "relu":
            return F.relu(x)
        if self.activation == "gelu":
            return F.gelu(x)
        return F.gelu(x, approximate="tanh")  # gelu_new and gelu_pytorch_tanh

    def forward(self, hidden: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        b, t = hidden.size(0), hidden.size(1)
        q, k, v = self._heads(self.query(hidden)), self._heads(self.key(hidden)), self._heads(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + additive_mask
        probs = self.attention_dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, self.num_heads * self.head_dim)
        attended = self.attention_norm(hidden + self.hidden_dropout(self.attention_output(context)))
        expanded = self._activate(self.intermediate(attended))
        return self.output_norm(attended + self.hidden_dropout(self.output(expanded)))


class BertEncoder(nn.Module):
    def __init__(self, config: BertConfig, pooling: str = "cls"):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling '{pooling}' is not supported (expected one of {', '.join(POOLINGS)})")
        h = config.hidden_size
        self.pooling = pooling
        self.max_positions = config.max_position_embeddings
        self.word_embeddings = nn.Embedding(config.vocab_size, h)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, h)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, h)
        self.embedding_norm = nn.LayerNorm(h, eps=config.layer_norm_eps)
        self.embedding_dropout = nn.Dropout(config.hidden_dropout_prob)
        self.layers = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        t = input_ids.size(1)
        if t > self.max_positions:
            raise ValueError(f"sequence of {t} tokens exceeds the model's {self.max_positions} positions")
        positions = torch.arange(t, device=input_ids.device)
        hidden = (self.word_embeddings(input_ids) + self.position_embeddings(positions).unsqueeze(0)
                  + self.token_type_embeddings.weight[0])
        hidden = self.embedding_dropout(self.embedding_norm(hidden))
        mask = attention_mask.to(hidden.dtype)
        # Hugging Face adds the dtype's lowest value at padded keys; a finite value keeps rows
        # that are entirely padding free of NaN.
        additive_mask = ((1.0 - mask) * -3.4028234663852886e38)[:, None, None, :]
        for layer in self.layers:
            hidden = layer(hidden, additive_mask)
        if self.pooling == "mean":
            weights = mask.unsqueeze(-1)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)
        else:
            pooled = hidden[:, 0]
        return hidden, pooled
