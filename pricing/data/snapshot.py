"""Write the price data of a pinned `genai-prices` PyPI release as JSON.

The package ships its data as Python objects (genai_prices/data.py); this dumps them in the JSON
shape of the project's prices/data.json, which the package's own loader reads back
(`_providers_from_raw`); the script checks that round trip before writing. It also writes a
sample of prices computed by the package itself (pricing/testdata/genai-prices-examples.json),
which the Go tests compare against.

    python3 -m venv /tmp/gp && /tmp/gp/bin/pip install genai-prices==0.2.3
    /tmp/gp/bin/python pricing/data/snapshot.py pricing/data/genai-prices-0.2.3.json \
        pricing/testdata/genai-prices-examples.json
"""

import dataclasses
import json
import sys
from datetime import date, datetime, time, timezone
from decimal import Decimal

import genai_prices
from genai_prices import data, types

ALIASES = {'or_': 'or', 'and_': 'and'}


def dump(value):
    if isinstance(value, types.ModelPrice):
        return {k: dump(v) for k, v in value.__dict__.items() if not k.startswith('_') and v is not None}
    if dataclasses.is_dataclass(value):
        out = {}
        for f in dataclasses.fields(value):
            if f.name.startswith('_') or not f.init:
                continue
            v = getattr(value, f.name)
            if v is None:
                continue
            out[ALIASES.get(f.name, f.name)] = dump(v)
        return out
    if isinstance(value, list):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    if isinstance(value, Decimal):
        # Keep the decimal exactly: an integer stays an integer, else the shortest float text.
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (date, time)):
        return value.isoformat()
    return value


# Usage samples priced by the package itself; the Go tests must give the same figures.
EXAMPLES = [
    ('openai', 'gpt-4o', dict(input_tokens=1000, output_tokens=500), '2025-06-01T12:00:00'),
    ('openai', 'gpt-4o-mini', dict(input_tokens=12000, cache_read_tokens=8000, output_tokens=300), '2025-06-01T12:00:00'),
    ('anthropic', 'claude-sonnet-4-5', dict(input_tokens=2000, cache_read_tokens=1500, cache_write_tokens=300, output_tokens=800), '2025-11-01T00:00:00'),
    ('anthropic', 'claude-sonnet-4-5', dict(input_tokens=250000, output_tokens=1000), '2025-11-01T00:00:00'),
    ('anthropic', 'claude-opus-4-6', dict(input_tokens=250000, output_tokens=1000), '2026-03-12T23:00:00'),
    ('anthropic', 'claude-opus-4-6', dict(input_tokens=250000, output_tokens=1000), '2026-03-13T01:00:00'),
    ('openai', 'o3', dict(input_tokens=1000, output_tokens=5000, output_reasoning_tokens=4000), '2025-09-01T00:00:00'),
    ('google', 'gemini-2.5-pro', dict(input_tokens=300000, output_tokens=2000), '2025-09-01T00:00:00'),
    ('deepseek', 'deepseek-chat', dict(input_tokens=10000, output_tokens=1000), '2025-09-01T03:00:00'),
]


def main(data_path, examples_path):
    providers = dump(data.providers)
    again = types._providers_from_raw(json.loads(json.dumps(providers)))
    if again != data.providers:
        sys.exit('round trip through the package loader changed the data')
    with open(data_path, 'w') as f:
        json.dump(providers, f, separators=(',', ':'), sort_keys=False)
        f.write('\n')
    examples = []
    for provider, model, usage, ts in EXAMPLES:
        when = datetime.fromisoformat(ts).replace(tzinfo=timezone.utc)
        p = genai_prices.calc_price(genai_prices.Usage(**usage), model, provider_id=provider, genai_request_timestamp=when)
        examples.append(dict(provider=provider, model=model, usage=usage, start_time=ts + 'Z',
                             matched_provider=p.provider.id, matched_model=p.model.id,
                             input_usd=str(p.input_price), output_usd=str(p.output_price), total_usd=str(p.total_price)))
    with open(examples_path, 'w') as f:
        json.dump(dict(genai_prices_version=genai_prices.__version__, examples=examples), f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
