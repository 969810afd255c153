"""The picture example draws grad(loss) with both passes and writes what it says it wrote."""
import os


def test_writes_the_graph_of_the_gradient(load_example, tmp_path, capsys):
    example = load_example("picture_of_a_gradient")
    graph = example.main(str(tmp_path / "g.svg"))
    printed = capsys.readouterr().out
    assert 'label="forward pass"' in graph.source and 'label="backward pass"' in graph.source
    assert "tanh" in graph.source and "dot_general" in graph.source
    nodes = sum(1 for line in graph.source.splitlines()
                if line.lstrip().startswith("n") and " [label=" in line)
    assert printed.startswith(f"{nodes} nodes; wrote ")
    for path in printed.split("wrote ")[1].strip().split(", "):
        assert os.path.getsize(path) > 0
    assert open(tmp_path / "g.dot").read() == graph.source
