"""Maps each top-level folder to a subpackage of ``rewardsmith``.

``verifiers/`` becomes ``rewardsmith.verifiers``, ``verifiers/code/`` becomes
``rewardsmith.verifiers.code`` and so on. ``datasets/`` is a namespace portion (no
``__init__.py``, see ARCHITECTURE.md), so packages are found with namespace discovery.
``rewardsmith`` itself is an implicit namespace package with no folder of its own: that is
what lets an editable install resolve the namespace portion ``rewardsmith.datasets`` (a
regular top-level package would hide it from setuptools' editable finder).
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

SUBPACKAGE_FOLDERS = [
    "verifiers",
    "reward_models",
    "graders",
    "datasets",
    "trainer",
    "cli",
    "environments",
]
DATA_FILES = [
    "*.jsonl",
    "*.json",
    "*.yaml",
    "*.md",
    "*.csv",
    "*.pdf",
    "*.stl",
    "*.obj",
    "*.png",
    "*.txt",
]


def _discover() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder in SUBPACKAGE_FOLDERS:
        if not Path(folder).is_dir():
            continue
        name = f"rewardsmith.{folder}"
        packages.append(name)
        package_dir[name] = folder
        for sub in find_namespace_packages(where=folder, exclude=["*__pycache__*"]):
            packages.append(f"{name}.{sub}")
    return packages, package_dir


packages, package_dir = _discover()
setup(
    packages=packages,
    package_dir=package_dir,
    package_data={name: DATA_FILES for name in packages},
)
