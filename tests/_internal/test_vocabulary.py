"""The ground floor: the enums cast as before and pickle under 0.1.x's module path."""

import pickle

import pytest

from gpuhunt._internal import models, vocabulary
from gpuhunt._internal.vocabulary import AcceleratorVendor, AMDArchitecture, CPUArchitecture


def test_enums_cast_and_refuse_as_before():
    assert AcceleratorVendor.cast(" NVIDIA ") is AcceleratorVendor.NVIDIA
    assert CPUArchitecture.cast("ARM") is CPUArchitecture.ARM
    assert AMDArchitecture.cast("cdna3") is AMDArchitecture.CDNA3
    with pytest.raises(ValueError, match="expected one of: x86, arm"):
        CPUArchitecture.cast("sparc")


def test_enums_are_pickled_under_the_models_path_gpuhunt_0_1_used():
    assert AcceleratorVendor.__module__ == "gpuhunt._internal.models"
    assert b"gpuhunt._internal.models" in pickle.dumps(AcceleratorVendor.AMD)
    assert pickle.loads(pickle.dumps(CPUArchitecture.ARM)) is CPUArchitecture.ARM
    assert models.AcceleratorVendor is vocabulary.AcceleratorVendor


def test_the_vocabulary_imports_nothing_of_gpuhunt():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(vocabulary.__file__).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    ]
    assert not [m for m in imported if m.startswith("gpuhunt")]


def test_the_info_classes_annotations_resolve_where_they_say_they_live():
    import typing

    import gpuhunt

    for cls in (gpuhunt.AcceleratorInfo, gpuhunt.NvidiaGPUInfo, gpuhunt.AMDGPUInfo):
        assert cls.__module__ == "gpuhunt._internal.models"
        hints = typing.get_type_hints(cls)
        assert hints["name"] is str and "vendor" in hints
    assert pickle.loads(pickle.dumps(gpuhunt.KNOWN_AMD_GPUS[0])) == gpuhunt.KNOWN_AMD_GPUS[0]
