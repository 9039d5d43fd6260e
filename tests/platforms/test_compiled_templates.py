"""Compiled templates kept between runs (netgen/templating.py _CompiledTemplates): a second process
renders from them without compiling, and a folder that is not private, or no folder, only means
compiling again."""

from __future__ import annotations

import jinja2
import pytest

from netgen import templating
from netgen.templating import template_env

pytestmark = pytest.mark.render


@pytest.fixture
def fresh_envs(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    template_env.cache_clear()
    yield tmp_path / "cache" / "netgen"
    template_env.cache_clear()


def test_templates_compiled_once_are_read_back_without_compiling(fresh_envs, monkeypatch):
    env = template_env("eos")
    env.get_template("device.cfg.j2")
    folders = list(fresh_envs.glob("templates-*"))
    assert len(folders) == 1 and len(list(folders[0].iterdir())) >= 1
    assert oct(folders[0].stat().st_mode & 0o777) == oct(0o700)
    template_env.cache_clear()

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compiling)
    assert template_env("eos").get_template("device.cfg.j2") is not None


def test_a_template_edited_since_is_compiled_again(fresh_envs, monkeypatch, tmp_path):
    templates = tmp_path / "templates"
    (templates / "eos").mkdir(parents=True)
    (templates / "eos" / "t.j2").write_text("one {{ v }}\n")
    monkeypatch.setattr(templating, "TEMPLATE_ROOT", templates)
    assert template_env("eos").get_template("t.j2").render(v=1) == "one 1\n"
    template_env.cache_clear()
    (templates / "eos" / "t.j2").write_text("two {{ v }}\n")
    assert template_env("eos").get_template("t.j2").render(v=1) == "two 1\n"


def test_a_folder_others_can_write_is_not_used(fresh_envs):
    template_env("eos").get_template("device.cfg.j2")
    folder = next(fresh_envs.glob("templates-*"))
    folder.chmod(0o777)
    assert templating._CompiledTemplates.open() is None


def test_no_cache_folder_means_compiling_each_time(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"  # XDG_CACHE_HOME a file: no folder can be made under it
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    templates = tmp_path / "templates"
    (templates / "eos").mkdir(parents=True)
    (templates / "eos" / "t.j2").write_text("one {{ v }}\n")
    monkeypatch.setattr(templating, "TEMPLATE_ROOT", templates)
    template_env.cache_clear()
    try:
        assert templating._CompiledTemplates.open() is None
        assert template_env("eos").bytecode_cache is None
        assert template_env("eos").get_template("t.j2").render(v=2) == "one 2\n"
    finally:
        template_env.cache_clear()
