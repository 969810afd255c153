"""SAM example: both runs learn the digits, and SAM ends in a flatter place."""


def test_sam_learns_and_finds_a_flatter_minimum(load_example):
    sam_training = load_example("sam_training")
    result = sam_training.main(steps=300, rho=0.2)
    for name in ("adam", "sam"):
        assert result[name]["test_accuracy"] > 0.93, result
        assert result[name]["train_loss"] < 0.3, result
    assert result["sam"]["sharpness"] < 0.5 * result["adam"]["sharpness"], result
