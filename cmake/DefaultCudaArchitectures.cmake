# Picks CUDA architectures when the user named none.
#  - A visible GPU: "native", i.e. exactly the GPU(s) on this machine (fast builds, best code).
#  - No GPU (CI, laptops): a list from Turing to Hopper, each as real code, plus PTX for the newest
#    so that later GPUs can still JIT it. CUDA 13 rejects anything older than sm_75.
function(reduce_default_cuda_architectures out_var)
  set(archs "75-real;80-real;86-real;89-real;90")
  find_program(_reduce_nvidia_smi nvidia-smi)
  if(_reduce_nvidia_smi)
    execute_process(COMMAND ${_reduce_nvidia_smi} -L
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0 AND out MATCHES "GPU [0-9]+:")
      set(archs native)
    endif()
  endif()
  set(${out_var} "${archs}" CACHE STRING "CUDA architectures (default: native with a GPU, else sm_75..sm_90)")
endfunction()
