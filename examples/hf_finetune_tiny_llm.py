"""A real causal-LM training run through the Hugging Face ``Trainer``, watched live by rocmtui.

The model is a small Llama built from a config (weights initialised here: nothing is downloaded); the
text ships with the repository (``examples/data/founding-texts.txt``, public domain), tokenised by
characters. About a minute on a 2-core CPU with the defaults; ``--size`` grows it for a GPU.

    rocmtui run -- python examples/hf_finetune_tiny_llm.py
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

from rocmtui.integrations.transformers import RocmtuiCallback

TEXT = Path(__file__).resolve().parent / "data" / "founding-texts.txt"
SIZES = {"tiny": (128, 2, 4), "small": (256, 4, 8), "medium": (768, 12, 12)}
"""hidden size, layers, attention heads."""


class CharBlocks(torch.utils.data.Dataset[dict[str, torch.Tensor]]):
    """Overlapping blocks of character ids; labels are the inputs (the model shifts them)."""

    def __init__(self, ids: torch.Tensor, block: int, stride: int) -> None:
        self.ids, self.block = ids, block
        self.starts = list(range(0, len(ids) - block, stride))

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        chunk = self.ids[self.starts[index] : self.starts[index] + self.block]
        return {"input_ids": chunk, "labels": chunk}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="tiny")
    parser.add_argument("--max-steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--block", type=int, default=64, help="characters per sequence")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--output-dir", default="runs/hf-tiny-llm-trainer")
    args = parser.parse_args()

    torch.manual_seed(0)
    text = TEXT.read_text(encoding="utf-8")
    vocab = sorted(set(text))
    ids = torch.tensor([vocab.index(c) for c in text], dtype=torch.long)
    split = int(0.9 * len(ids))
    train = CharBlocks(ids[:split], args.block, stride=8)
    held_out = CharBlocks(ids[split:], args.block, stride=args.block)

    hidden, layers, heads = SIZES[args.size]
    config = LlamaConfig(
        vocab_size=len(vocab), hidden_size=hidden, intermediate_size=4 * hidden, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=2 * args.block,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    training = TrainingArguments(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        learning_rate=args.lr,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, args.max_steps // 20),
        logging_steps=5,
        eval_strategy="steps",
        eval_steps=max(1, args.max_steps // 5),
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,  # the progress is in rocmtui's window; a bar would only fill the log
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        dataloader_num_workers=0,
    )
    params: dict[str, Any] = {**vars(args), "parameters": sum(p.numel() for p in model.parameters())}
    trainer = Trainer(
        model=model,
        args=training,
        train_dataset=train,
        eval_dataset=held_out,
        callbacks=[RocmtuiCallback("tiny-llm", config=params, tokens_per_step=args.batch_size * args.block)],
    )
    print(f"training a {params['parameters']:,}-parameter Llama on {len(text):,} characters of {TEXT.name}")
    trainer.train()
    prompt = torch.tensor([[vocab.index(c) for c in "We hold these truths"]], device=model.device)
    sample = model.generate(prompt, max_new_tokens=args.block, do_sample=False)
    print("sample:", "".join(vocab[i] for i in sample[0].tolist()))


if __name__ == "__main__":
    main()
