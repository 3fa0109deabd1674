#!/usr/bin/python3
"""Write tests/data/sample.npy, the file the README's first command shows:
a small Fortran-ordered big-endian array, so the header says something."""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
a = np.asfortranarray((np.arange(12).reshape(3, 4) / 4).astype(">f8"))
np.save(os.path.join(here, "sample.npy"), a)
print(np.load(os.path.join(here, "sample.npy")))
