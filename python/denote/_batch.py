"""A leading batch axis for Model.run and Model.grad (the convention of torch and auto_LiRPA; Model.bounds takes
the same batch in C++, python/src/bounds_batch.cc). A model of one input whose shape starts with 1 (a capture
or an ONNX file at batch 1, or one whose symbolic batch dim was read as 1), called with an array of shape
[N, *input shape without its leading 1] (N != 1), runs each sample as its own call and stacks the results
along that axis: each result's leading 1 becomes N, IEEE flags are or-ed, parameter gradients are summed
(the gradient of the summed outputs, as torch's backward of a batch's sum). See docs/PYTHON.md."""
import numpy as np


def _as_array(x):
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (no gradient: checked), without importing torch
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _batch(model, inputs):
    """The samples of a batched call (arrays of the input's shape), or None when the call is not one."""
    if len(inputs) != 1:
        return None
    shapes = model.input_shapes
    if len(shapes) != 1 or not shapes[0] or shapes[0][0] != 1:
        return None
    shape = getattr(inputs[0], "shape", None)  # nothing converted before it is known to be a batch
    sample = list(shapes[0][1:])
    if shape is None or getattr(inputs[0], "requires_grad", False):  # the call's own conversion and errors
        return None
    shape = list(shape)
    if len(shape) != len(sample) + 1 or shape[1:] != sample or shape[0] == 1:
        return None
    x = _as_array(inputs[0])
    return [x[i:i + 1] for i in range(x.shape[0])]


def _stack(results):
    """The per-sample results as one: arrays along a new (or their leading 1) axis, flags or-ed, containers
    element by element (results are at most a tuple of a list or dict of arrays and a dict of flags)."""
    first = results[0]
    if isinstance(first, dict):
        return {k: _stack([r[k] for r in results]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_stack([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, (bool, np.bool_)):
        return any(bool(r) for r in results)
    arrays = [np.asarray(r) for r in results]
    if arrays[0].ndim and arrays[0].shape[0] == 1:
        return np.concatenate(arrays, axis=0)
    return np.stack(arrays, axis=0)


def _sum(results):
    """Parameter gradients of every sample, summed (the same containers)."""
    first = results[0]
    if isinstance(first, dict):
        return {k: _sum([r[k] for r in results]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_sum([r[i] for r in results]) for i in range(len(first)))
    return sum(np.asarray(r) for r in results)


def install(model_class):
    run, grad = model_class.run, model_class.grad

    def batched_run(self, *inputs, **kwargs):
        samples = _batch(self, inputs)
        if samples is None:
            return run(self, *inputs, **kwargs)
        return _stack([run(self, x, **kwargs) for x in samples])

    def batched_grad(self, *inputs, **kwargs):
        samples = _batch(self, inputs)
        if samples is None:
            return grad(self, *inputs, **kwargs)
        cot = kwargs.pop("cotangent", None)
        if cot is not None:
            cot = _as_array(cot)
            if cot.ndim == 0 or cot.shape[0] != len(samples):
                raise ValueError(f"cotangent: a batch of {len(samples)} samples takes one cotangent per sample "
                                 f"(a leading axis of {len(samples)}), not shape {cot.shape}")
        out_shape = self.output_shapes[self.outputs.index(kwargs["output"]) if kwargs.get("output") in self.outputs
                                       else 0] if self.outputs else []
        keeps_one = bool(out_shape) and out_shape[0] == 1  # sample i's cotangent keeps the output's leading 1
        out = []
        for i, x in enumerate(samples):
            kw = dict(kwargs)
            if cot is not None:
                kw["cotangent"] = cot[i:i + 1] if keeps_one else cot[i]
            out.append(grad(self, x, **kw))
        wrt = kwargs.get("wrt", "inputs")
        if wrt == "params":
            return _sum(out)
        if wrt == "all":  # (input gradients, parameter gradients)
            return _stack([r[0] for r in out]), _sum([r[1] for r in out])
        return _stack(out)

    batched_run.__doc__, batched_grad.__doc__ = run.__doc__, grad.__doc__
    batched_run.__name__, batched_grad.__name__ = "run", "grad"
    model_class.run, model_class.grad = batched_run, batched_grad
