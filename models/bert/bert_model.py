"""Plain-torch BERT-family encoders that satisfy the counterpoint TorchScript contract:

    forward(input_ids int64 [B, T], attention_mask int64 [B, T])
        -> (token_states float [B, T, H] (last layer), pooled float [B, H])

BertEncoder follows Hugging Face's BertModel in eval mode with token type ids 0, MPNetEncoder its
MPNetModel; weights map one to one. The two families share their layers (post-norm attention and
feed-forward) and pooling and differ where FAMILIES says: MPNet has no token types, counts
positions from pad_id + 1 over the non-padding tokens, and adds one relative position bias (its
buckets' learned values, shared by every layer) to each layer's attention scores. `pooled` is the
manifest's pooling applied here too ("cls": the first token's state, "mean": the masked mean),
left unnormalised; the library normalises. Every weight is an nn.Parameter, so the scripted
module can be fine-tuned.

BertEncoder.forward is shared; a family overrides embed() (the embedding sum) and score_offset()
(what each layer adds to its attention scores).
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")
POOLINGS = ("cls", "mean")


# What differs between the supported `model_type`s of config.json; everything else is shared.
#   prefix:           the base model's weight-name prefix in task checkpoints ("bert.", "mpnet.")
#   token_types:      a token type embedding is added (type id 0 throughout)
#   relative_buckets: the config field giving the number of relative position buckets, or None
#   default_eps:      layer_norm_eps when config.json does not give it (Hugging Face's default)
FAMILIES = {
    "bert": {"prefix": "bert.", "token_types": True, "relative_buckets": None, "default_eps": 1e-12},
    "mpnet": {"prefix": "mpnet.", "token_types": False, "relative_buckets": "relative_attention_num_buckets",
              "default_eps": 1e-12},
}
# The distance past which MPNet's buckets grow no finer (transformers' relative_position_bucket's
# max_distance; config.json does not carry it).
MPNET_MAX_DISTANCE = 128


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
    model_type: str = "bert"
    pad_token_id: int = 0
    relative_attention_num_buckets: int = 0

    @staticmethod
    def from_hf(config):
        """From a config.json dict; ValueError naming the field on anything unsupported."""
        model_type = config.get("model_type", "bert")
        if model_type not in FAMILIES:
            raise ValueError(f"config.json model_type '{model_type}' is not supported (supported: "
                             f"{', '.join(FAMILIES)})")
        family = FAMILIES[model_type]
        required = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                    "max_position_embeddings"]
        if family["relative_buckets"]:
            required += [family["relative_buckets"], "pad_token_id"]
        missing = [k for k in required if k not in config]
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
            layer_norm_eps=float(config.get("layer_norm_eps", family["default_eps"])),
            hidden_dropout_prob=float(config.get("hidden_dropout_prob", 0.1)),
            attention_probs_dropout_prob=float(config.get("attention_probs_dropout_prob", 0.1)),
            model_type=model_type, pad_token_id=int(config.get("pad_token_id", 0)),
            relative_attention_num_buckets=int(config[family["relative_buckets"]]) if family["relative_buckets"] else 0)
        if result.hidden_size % result.num_attention_heads:
            raise ValueError(f"config.json hidden_size {result.hidden_size} is not a multiple of "
                             f"num_attention_heads {result.num_attention_heads}")
        if family["relative_buckets"] and result.relative_attention_num_buckets < 8:
            raise ValueError(f"config.json {family['relative_buckets']} {result.relative_attention_num_buckets} "
                             f"is below 8 (the bucketing needs exact and logarithmic halves on both sides)")
        if not family["token_types"] and result.max_position_embeddings <= result.pad_token_id + 2:
            raise ValueError(f"config.json max_position_embeddings {result.max_position_embeddings} leaves no "
                             f"position after pad_token_id {result.pad_token_id} + 1, where {model_type} counts from")
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

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The embedding sum before its norm: words, absolute positions 0.., token type 0."""
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        return (self.word_embeddings(input_ids) + self.position_embeddings(positions).unsqueeze(0)
                + self.token_type_embeddings.weight[0])

    def score_offset(self, additive_mask: torch.Tensor, t: int) -> torch.Tensor:
        """What every layer adds to its attention scores: the padding mask alone."""
        return additive_mask

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        t = input_ids.size(1)
        if t > self.max_positions:
            raise ValueError(f"sequence of {t} tokens exceeds the model's {self.max_positions} positions")
        hidden = self.embedding_dropout(self.embedding_norm(self.embed(input_ids)))
        mask = attention_mask.to(hidden.dtype)
        # Hugging Face adds the dtype's lowest value at padded keys; a finite value keeps rows
        # that are entirely padding free of NaN.
        additive_mask = ((1.0 - mask) * -3.4028234663852886e38)[:, None, None, :]
        offset = self.score_offset(additive_mask, t)
        for layer in self.layers:
            hidden = layer(hidden, offset)
        if self.pooling == "mean":
            weights = mask.unsqueeze(-1)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)
        else:
            pooled = hidden[:, 0]
        return hidden, pooled


class MPNetEncoder(BertEncoder):
    """Hugging Face's MPNetModel: BertEncoder's layers and pooling (the token type table removed),
    positions counted from pad_id + 1, and one relative position bias added to the attention
    scores of every layer. The bias table is named relative_position_embeddings so that partial
    fine-tuning (--frozen-layers) freezes it with the other embeddings."""

    def __init__(self, config: BertConfig, pooling: str = "cls"):
        super().__init__(config, pooling)
        del self.token_type_embeddings
        self.pad_id = config.pad_token_id
        # Position pad_id + k holds the k-th token, so the table embeds this many tokens.
        self.max_positions = config.max_position_embeddings - config.pad_token_id - 1
        self.half_buckets = config.relative_attention_num_buckets // 2
        self.max_exact = self.half_buckets // 2
        self.log_ratio = math.log(MPNET_MAX_DISTANCE / self.max_exact)
        self.relative_position_embeddings = nn.Embedding(config.relative_attention_num_buckets,
                                                         config.num_attention_heads)

    def relative_buckets(self, t: int, device: torch.device) -> torch.Tensor:
        """[t, t] bucket of key j for query i: transformers' relative_position_bucket of j - i,
        the same float32 steps, so that every distance lands in the bucket it lands in there."""
        position = torch.arange(t, dtype=torch.long, device=device)
        n = position[:, None] - position[None, :]  # -(key - query)
        buckets = (n < 0).to(torch.long) * self.half_buckets
        n = torch.abs(n)
        large = self.max_exact + (torch.log(n.float() / self.max_exact) / self.log_ratio
                                  * (self.half_buckets - self.max_exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, self.half_buckets - 1))
        return buckets + torch.where(n < self.max_exact, n, large)

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Words and positions: transformers' create_position_ids_from_input_ids counts them from
        pad_id + 1 over the ids that are not padding (by the ids, not the attention mask, so a
        text that spells the padding token gets what the reference gives it)."""
        real = input_ids.ne(self.pad_id).to(torch.long)
        positions = torch.cumsum(real, dim=1) * real + self.pad_id
        return self.word_embeddings(input_ids) + self.position_embeddings(positions)

    def score_offset(self, additive_mask: torch.Tensor, t: int) -> torch.Tensor:
        """The mask plus the relative position bias [1, heads, t, t]. At every key that is not
        padding the mask adds 0, so each score gets exactly the bias the reference adds."""
        bias = self.relative_position_embeddings(self.relative_buckets(t, additive_mask.device)).permute(2, 0, 1)
        return additive_mask + bias.unsqueeze(0)


# The module each model_type is loaded into.
ENCODERS = {"bert": BertEncoder, "mpnet": MPNetEncoder}
