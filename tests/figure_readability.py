"""Readability of a rendered figure: no two texts overlap, none is too small.

Measured with matplotlib's renderer at the resolution the figure is saved
with: the extent of every visible text (with its background box, if any), in
pixels of the saved image, and its font size in pixels.
"""

import numpy as np


def text_extents(figure, dpi):
    """(text, font size in px, extent in px) of every text drawn in ``figure``.

    The figure is drawn at ``dpi`` as ``savefig(dpi=dpi)`` does; the texts are
    those the renderer draws (tick labels of a hidden axis, empty or invisible
    texts are not).
    """
    from unittest import mock

    from matplotlib.text import Text

    drawn = []
    original_draw = Text.draw

    def recording_draw(self, renderer):
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        return original_draw(self, renderer)

    original_dpi = figure.dpi
    figure.set_dpi(dpi)
    try:
        renderer = figure.canvas.get_renderer()
        with mock.patch.object(Text, "draw", recording_draw):
            figure.draw(renderer)
        found = []
        for text in dict.fromkeys(drawn):
            extent = text.get_window_extent(renderer)
            patch = text.get_bbox_patch()
            if patch is not None:
                extent = type(extent).union([extent, patch.get_window_extent(renderer)])
            found.append((text.get_text(), text.get_fontsize() * dpi / 72, extent))
        return found
    finally:
        figure.set_dpi(original_dpi)


def readability_problems(figure, dpi, *, min_pixels=8.0, tolerance=0.5):
    """Texts smaller than ``min_pixels`` and pairs of overlapping texts.

    Returns
    -------
    small : list of (text, size)
    overlaps : list of (text, text)
    """
    found = text_extents(figure, dpi)
    small = [(text, size) for text, size, _ in found if size < min_pixels]
    boxes = np.array([[e.x0, e.y0, e.x1, e.y1] for _, _, e in found]).reshape(-1, 4)
    overlaps = []
    for i in range(boxes.shape[0]):
        dx = np.minimum(boxes[i, 2], boxes[i + 1 :, 2]) - np.maximum(
            boxes[i, 0], boxes[i + 1 :, 0]
        )
        dy = np.minimum(boxes[i, 3], boxes[i + 1 :, 3]) - np.maximum(
            boxes[i, 1], boxes[i + 1 :, 1]
        )
        for j in np.flatnonzero((dx > tolerance) & (dy > tolerance)):
            overlaps.append((found[i][0], found[i + 1 + j][0]))
    return small, overlaps


def assert_readable(figure, dpi, *, min_pixels=8.0):
    """Fail with the offending texts if the figure saved at ``dpi`` is not readable."""
    small, overlaps = readability_problems(figure, dpi, min_pixels=min_pixels)
    assert not small, f"texts under {min_pixels} px: {small[:5]}"
    assert not overlaps, f"{len(overlaps)} overlapping texts, e.g. {overlaps[:3]}"
