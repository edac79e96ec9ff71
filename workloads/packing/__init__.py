"""CNN-ISPM: packing the tensors a split inference sends across the network.

DynO's packing has three stages, run on the client (Almeida et al., TECS'22):

1. **ISQuant** (:mod:`.isquant`): linear quantisation of each tensor to ``b``
   bits with a scale from that tensor's own min/max;
2. **bit shuffle** (:mod:`.bitshuffle`): the bit matrix is transposed so that
   equal-significance bits of all elements sit together (sparse, low-entropy
   high bits become long zero runs);
3. **LZ4** lossless compression.

Two ways to get sizes and times:

* :mod:`.codec` -- the real chain (numpy quantisation, bit shuffling, the
  ``lz4`` package) on arrays or activation dumps (``.npy``), measuring the
  packed size and the time of each stage on this machine;
* :mod:`.model` -- a size model from a tensor's statistics (elements,
  sparsity) and the work of each stage as kernels, so that packing runs on a
  simulated processor like any other kernel (:mod:`.kernels`).
"""
