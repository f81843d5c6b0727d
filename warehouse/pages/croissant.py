"""Croissant (MLCommons) metadata for an exported release, built with mlcroissant's own classes."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.layout import CardPaths
from warehouse.pages.pii_statement import pii_statement

_TYPES = {pa.string(): "TEXT", pa.int64(): "INTEGER", pa.int32(): "INTEGER", pa.bool_(): "BOOL",
          pa.float64(): "FLOAT"}


def _data_type(arrow_type: pa.DataType) -> tuple[str, bool]:
    """Croissant data type name and whether the column is a list (repeated field)."""
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _TYPES.get(arrow_type.value_type, "TEXT"), True
    return _TYPES.get(arrow_type, "TEXT"), False


def croissant_metadata(out_dir: Path, manifest: dict[str, Any], files: dict[str, str],
                       description: str, license_name: str, url: str) -> dict[str, Any]:
    """JSON-LD for the Parquet files in out_dir (`files`: split -> relative path), one RecordSet per split."""
    import mlcroissant as mlc

    distribution, record_sets = [], []
    for split, rel in files.items():
        path = out_dir / rel
        fid = f"{split}-parquet"
        distribution.append(mlc.FileObject(
            id=fid, name=fid, content_url=rel, encoding_formats=["application/x-parquet"],
            sha256=manifest["files"].get(rel, {}).get("sha256") or _sha256(path),
            content_size=f"{path.stat().st_size} B"))
        fields = []
        for col in pq.read_schema(path):
            dtype, repeated = _data_type(col.type)
            fields.append(mlc.Field(
                id=f"{split}/{col.name}", name=col.name, data_types=[getattr(mlc.DataType, dtype)],
                repeated=repeated or None,
                source=mlc.Source(file_object=fid, extract=mlc.Extract(column=col.name))))
        record_sets.append(mlc.RecordSet(id=split, name=split, fields=fields,
                                         description=f"{split} split of {manifest['dataset']}/{manifest['version']}"))
    created = datetime.fromisoformat(manifest["created"])
    meta = mlc.Metadata(
        name=manifest["dataset"], description=description, url=url, license=[license_name],
        version=_semver(manifest["version"]), date_published=created, cite_as=_CITE,
        distribution=distribution, record_sets=record_sets, in_language=["en"],
        personal_sensitive_information=pii_statement(manifest),
    )
    return meta.to_json()


def write_croissant(card: CardPaths, **kwargs: Any) -> Path:
    card.croissant.write_text(json.dumps(croissant_metadata(card.root, **kwargs), indent=2, default=str) + "\n")
    return card.croissant


def _semver(version: str) -> str:
    digits = version.lstrip("v")
    return f"{int(digits)}.0.0" if digits.isdigit() else "0.0.0"


def _sha256(path: Path) -> str:
    from common.checksums import sha256_file

    return sha256_file(path)


_CITE = ("@inproceedings{shu2026express, title={Fluent but Unfeeling: The Emotional Blind Spots of "
         "Language Models}, author={Shu, Bangzhao and others}, booktitle={ICWSM}, year={2026}}")
