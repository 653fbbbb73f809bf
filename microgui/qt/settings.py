"""UI preferences (window geometry, recent files) behind one small class over QSettings.

Only UI state lives here; project data never does (STYLE.md §6). Tests redirect the storage with
``QSettings.setPath(IniFormat, UserScope, tmp_dir)``: the INI format is forced on every platform so
that the redirect always applies.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

__all__ = ["UiSettings", "MAX_RECENT_FILES"]

MAX_RECENT_FILES = 8


class UiSettings:
    """Window geometry/state and the recent-files list.

    ``persist=False`` keeps everything in memory (used by the screenshot mode, which must not
    change the user's settings).
    """

    def __init__(self, persist: bool = True) -> None:
        self._persist = persist
        self._qsettings: QSettings | None = (
            QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "microgui", "microgui")
            if persist
            else None
        )
        self._memory: dict[str, object] = {}

    @property
    def persist(self) -> bool:
        return self._persist

    @property
    def file_name(self) -> str:
        """Where the settings are stored ('' when in memory)."""
        return self._qsettings.fileName() if self._qsettings is not None else ""

    def _get(self, key: str) -> object:
        if self._qsettings is None:
            return self._memory.get(key)
        return self._qsettings.value(key)

    def _set(self, key: str, value: object) -> None:
        if self._qsettings is None:
            self._memory[key] = value
        else:
            self._qsettings.setValue(key, value)

    # geometry -----------------------------------------------------------------------------
    def geometry(self) -> QByteArray | None:
        value = self._get("window/geometry")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_geometry(self, value: QByteArray) -> None:
        self._set("window/geometry", value)

    def window_state(self) -> QByteArray | None:
        value = self._get("window/state")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_window_state(self, value: QByteArray) -> None:
        self._set("window/state", value)

    def method_dock_user_sized(self) -> bool:
        """Whether the user moved the separator under the Method dock (kept with the layout)."""
        return str(self._get("window/method_dock_user_sized")).lower() == "true"

    def set_method_dock_user_sized(self, value: bool) -> None:
        self._set("window/method_dock_user_sized", "true" if value else "false")

    def screen_size(self) -> tuple[int, int] | None:
        """The free area of the screen the stored layout was made on (width, height)."""
        value = self._get("window/screen")
        try:
            width, height = (int(v) for v in str(value).split("x"))
        except ValueError:
            return None
        return width, height

    def set_screen_size(self, width: int, height: int) -> None:
        self._set("window/screen", f"{width}x{height}")

    # recent files -------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self._get("files/recent")
        if isinstance(value, str):
            items = [value] if value else []
        elif isinstance(value, list):
            items = [str(v) for v in value if v]
        else:
            items = []
        return items[:MAX_RECENT_FILES]

    def add_recent_file(self, path: str | Path) -> list[str]:
        text = str(Path(path).resolve())
        items = [text] + [p for p in self.recent_files() if p != text]
        items = items[:MAX_RECENT_FILES]
        self._set("files/recent", items)
        return items

    def remove_recent_file(self, path: str | Path) -> list[str]:
        text = str(path)
        items = [p for p in self.recent_files() if p != text]
        self._set("files/recent", items)
        return items

    def clear_recent_files(self) -> None:
        self._set("files/recent", [])

    def last_directory(self) -> str:
        value = self._get("files/last_directory")
        return str(value) if value else ""

    def set_last_directory(self, path: str | Path) -> None:
        self._set("files/last_directory", str(path))

    def export_directory(self) -> str:
        """Where the last release was exported ('' before the first)."""
        value = self._get("files/export_directory")
        return str(value) if value else ""

    def set_export_directory(self, path: str | Path) -> None:
        self._set("files/export_directory", str(path))

    def sync(self) -> None:
        if self._qsettings is not None:
            self._qsettings.sync()
