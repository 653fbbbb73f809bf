"""Issue 15: :func:`microgui.core.views.layout.place_tree_labels` puts every label of a drawn tree where
it covers no other label, no vertex and no obstacle, inside the drawing (pixel geometry, no Qt)."""

from __future__ import annotations

import numpy as np

from microgui.core.views.layout import boxes_overlap, place_tree_labels, tree_layout, tree_points


def _check(placement, points, radii, bounds, obstacles=None) -> None:  # type: ignore[no-untyped-def]
    boxes = np.concatenate([placement.node_boxes, placement.edge_boxes])
    overlap = boxes_overlap(boxes, boxes)
    np.fill_diagonal(overlap, 0.0)
    assert overlap.max() == 0.0
    vertices = np.column_stack([points - radii[:, None], points + radii[:, None]])
    cover = boxes_overlap(boxes, vertices)
    for i in range(len(points)):
        cover[i, i] = 0.0  # a vertex's own label may touch it
    assert cover.max() == 0.0
    left, top, right, bottom = bounds
    assert (boxes[:, 0] >= left).all() and (boxes[:, 2] <= right).all()
    assert (boxes[:, 1] >= top).all() and (boxes[:, 3] <= bottom).all()
    if obstacles is not None:
        assert boxes_overlap(boxes, obstacles).max() == 0.0


def test_a_star_of_long_names_fits_without_overlap() -> None:
    names = ["hub"] + [f"a_long_attribute_name_{i}" for i in range(8)]
    layout = tree_layout(names, [(0, i) for i in range(1, 9)], np.linspace(0.1, 4, 8))
    bounds = (0.0, 0.0, 500.0, 420.0)
    points = tree_points(layout, "right", (50.0, 20.0, 300.0, 400.0))
    radii = np.full(9, 8.0)
    sizes = np.array([[30.0, 18.0]] + [[170.0, 18.0]] * 8)
    edge_sizes = np.full((8, 2), [38.0, 17.0])
    sides = [("above", "below")] + [("right",)] * 8
    placement = place_tree_labels(
        points, radii, sizes, layout.edges, edge_sizes, bounds, node_sides=sides
    )
    assert placement.conflicts == 0
    _check(placement, points, radii, bounds)
    # leaves of a left-to-right tree have their names to their right
    assert (placement.node_boxes[1:, 0] > points[1:, 0]).all()


def test_labels_avoid_an_obstacle_and_say_when_they_cannot_fit() -> None:
    layout = tree_layout(list("abcde"), [(0, 1), (1, 2), (2, 3), (3, 4)], [1.0] * 4)
    bounds = (0.0, 0.0, 400.0, 300.0)
    points = tree_points(layout, "down", (40.0, 60.0, 360.0, 270.0))
    radii = np.full(5, 7.0)
    sizes = np.full((5, 2), [60.0, 30.0])
    edges = np.full((4, 2), [36.0, 16.0])
    legend = np.array([[0.0, 0.0, 250.0, 55.0]])
    placement = place_tree_labels(
        points, radii, sizes, layout.edges, edges, bounds, obstacles=legend
    )
    assert placement.conflicts == 0
    _check(placement, points, radii, bounds, legend)
    tiny = place_tree_labels(points, radii, sizes * 6, layout.edges, edges, (0.0, 0.0, 60.0, 60.0))
    assert tiny.conflicts > 0


def test_tree_points_fill_the_box_in_both_directions() -> None:
    layout = tree_layout(list("abcd"), [(0, 1), (0, 2), (0, 3)])
    box = (10.0, 20.0, 110.0, 220.0)
    down = tree_points(layout, "down", box)
    right = tree_points(layout, "right", box)
    assert down[:, 0].min() == 10.0 and down[:, 0].max() == 110.0
    assert down[:, 1].min() == 20.0 and down[:, 1].max() == 220.0
    assert right[0, 0] == 10.0 and right[1:, 0].tolist() == [110.0] * 3
