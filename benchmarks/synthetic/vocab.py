"""Technical vocabulary for synthetic papers: research fields, title templates, abstract sentences.

The style follows the real captures (ML / HPC / systems preprints): coined system names with a
colon subtitle (``DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training``),
acronyms whose letters spell an expansion (``BEAM: Binary Expert Activation Masking ...``),
gerund titles (``Rethinking Parameter Sharing as Graph Coloring ...``), old-style lower-case
HPC titles (``The dynamic parallel distribution algorithm for ... in HONPAS package``).

Everything here is plain data plus a few pure helpers; the generator draws from it with seeded
random number generators, so the same seed always yields the same corpus.

Abstract sentences carry ``@SLOT@`` placeholders that are filled per paper at render time
(``@M@`` method name, ``@OBJ@`` object phrase, numbers, ...). ``@`` never occurs in real
abstract text here, so filling cannot clash with LaTeX braces such as ``\\textbf{L}oss``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Field:
    """A research community's topic area: what its titles and abstracts talk about."""

    key: str
    categories: tuple[tuple[str, float], ...]   # arXiv suffix as shown by Scholar Feed, weight
    objects: tuple[str, ...]                     # Title Case noun phrases
    tasks: tuple[str, ...]                       # Title Case goal phrases ("Elastic LLM Training")
    techniques: tuple[str, ...]                  # Title Case method phrases
    hardware: tuple[str, ...]                    # where it runs
    datasets: tuple[str, ...]
    baselines: tuple[str, ...]
    domain: str                                  # lower-case phrase for context sentences


FIELDS: tuple[Field, ...] = (
    Field(
        "llm_systems",
        (("LG", 0.45), ("DC", 0.35), ("CL", 0.15), ("PF", 0.05)),
        ("Large Language Models", "LLM Training", "LLM Inference", "Mixture-of-Experts Models",
         "Transformer Training", "KV Cache Management", "Speculative Decoding", "Pipeline Parallelism",
         "Tensor Parallelism", "Activation Checkpointing", "Gradient Compression", "Optimizer State Sharding",
         "Long-Context Inference", "Parameter-Efficient Fine-Tuning", "Attention Kernels",
         "Expert Parallelism", "Collective Communication", "Parallelism Layouts", "Training Checkpoints"),
        ("Elastic LLM Training", "Distributed LLM Training", "LLM Serving", "Long-Context LLM Inference",
         "Large-Scale Pre-Training", "Efficient Fine-Tuning", "Mixture-of-Experts Inference",
         "Fault-Tolerant Training", "Low-Latency Decoding", "Reinforcement Learning from Human Feedback",
         "Multi-Tenant Model Serving", "Trillion-Parameter Training"),
        ("Online Parallelism Switching", "Local SGD", "Orthogonal Growth", "Block Coordinate Descent",
         "Stable Rank Restoration", "Binary Expert Activation Masking", "Overlapped Communication",
         "Disentangled Clustering", "Virtual Parameter Spaces", "Dynamic Routing", "Paged Attention",
         "Zero-Redundancy Sharding", "Adaptive Recomputation", "Asynchronous Checkpointing"),
        ("GPU Clusters", "Early-Life Hardware", "Heterogeneous GPU Clusters", "Commodity GPUs",
         "Ascend NPUs", "Consumer-Grade GPUs", "Multi-Node Clusters"),
        ("C4", "The Pile", "SlimPajama", "MMLU", "GSM8K", "HumanEval", "WikiText-103"),
        ("Megatron-LM", "DeepSpeed", "FSDP", "vLLM", "TorchTitan", "Alpa"),
        "large language model training and serving",
    ),
    Field(
        "compression",
        (("LG", 0.55), ("CV", 0.2), ("CL", 0.15), ("AI", 0.1)),
        ("Post-Training Quantization", "Low-Bit Quantization", "Mixed-Precision Inference",
         "Parameter Sharing", "Structured Pruning", "Knowledge Distillation", "Low-Rank Factorization",
         "Model Compression", "Weight Quantization", "Sparse Neural Networks", "Activation Outliers",
         "Quantization Noise", "Lossless Compression", "Binary Neural Networks", "Layer-Wise Quantization"),
        ("LLM Quantization", "Efficient Deployment", "Edge Inference", "Structured Compression",
         "Compression Strategies", "Low-Bit Inference", "Memory-Efficient Inference",
         "Accurate Quantization", "Hardware-Friendly Compression", "Compressing Vision Transformers"),
        ("Series Expansion", "Graph Coloring", "Centered Kernel Alignment", "Hessian Spectrum Analysis",
         "Error-Theoretical Analysis", "Mixture of Quantization Experts", "Rotation Matrices",
         "Learned Step Sizes", "Second-Order Pruning", "Codebook Learning", "Taylor Expansion"),
        ("Mobile Devices", "Edge Accelerators", "Commodity GPUs", "Microcontrollers", "FPGAs"),
        ("ImageNet", "CIFAR-100", "WikiText-2", "C4", "COCO"),
        ("GPTQ", "AWQ", "SmoothQuant", "OmniQuant", "BRECQ", "AdaRound"),
        "model compression and quantization",
    ),
    Field(
        "federated",
        (("LG", 0.55), ("DC", 0.25), ("CR", 0.1), ("IR", 0.1)),
        ("Federated Learning", "On-Device Training", "Device-Cloud Collaboration", "Split Learning",
         "Client Selection", "Non-IID Data", "Personalized Federated Learning", "Federated Submodels",
         "Secure Aggregation", "Collaborative Learning", "Cross-Silo Training", "Client Drift"),
        ("Large Vision Models", "Recommender Systems", "Intermittent Client Availability",
         "Hot and Cold Data Features", "Block-Cyclic Data", "Private Text Data", "Edge Intelligence",
         "Mobile Keyboards", "Heterogeneous Clients", "Label Correction"),
        ("Controlled Learning", "Submodel Optimization", "Knowledge Fusion", "Momentum Correction",
         "Periodic Averaging", "Proximal Regularization", "Gradient Sparsification", "Model Splitting"),
        ("Mobile Devices", "Edge Servers", "Smartphones", "IoT Devices", "the Cloud"),
        ("FEMNIST", "Shakespeare", "CIFAR-10", "Stack Overflow", "MovieLens"),
        ("FedAvg", "FedProx", "SCAFFOLD", "FedNova", "MOON"),
        "federated and on-device learning",
    ),
    Field(
        "hpc",
        (("DC", 0.6), ("PF", 0.2), ("MS", 0.1), ("CE", 0.1)),
        ("Sparse Matrix-Vector Multiplication", "Small GEMM", "Stencil Computation", "Molecular Dynamics",
         "Hybrid Density-Functional Calculations", "Quantum Chemistry Simulation", "Atomistic Simulation",
         "MPI Collectives", "Parallel I/O", "Performance Modeling", "Load Balancing", "Graph Processing",
         "Lattice Boltzmann Methods", "Configuration Interaction Selection", "Kinetic Monte Carlo"),
        ("Exascale Supercomputers", "Leadership-Scale Supercomputing", "HPC AI Systems",
         "Scientific Deep Learning", "Year-and-Meter Scales", "Reactor Pressure Vessel Steel",
         "Neural Network Quantum States", "Many-Core Processors", "Heterogeneous Supercomputers",
         "Climate Simulation", "Electronic Structure Calculations"),
        ("Auto-Tuning", "Input-Aware Adaptive Tuning", "Dynamic Parallel Distribution",
         "Voxel-Parallel Decomposition", "Communication Avoidance", "Task-Based Scheduling",
         "Mixed-Precision Arithmetic", "Cache Blocking", "Domain Decomposition", "Vectorization"),
        ("a New Sunway Supercomputer", "ARM Many-Core Processors", "GPU Supercomputers",
         "Fugaku", "Frontier", "Tianhe-2", "Multi-GPU Nodes"),
        ("SPEC CPU", "HPL", "HPCG", "SuiteSparse", "Graph500"),
        ("OpenBLAS", "MKL", "cuBLAS", "PETSc", "LAMMPS", "CP2K"),
        "high-performance scientific computing",
    ),
    Field(
        "vision",
        (("CV", 0.75), ("LG", 0.15), ("AI", 0.1)),
        ("Vision Transformers", "Object Detection", "Semantic Segmentation", "Image Generation",
         "Diffusion Models", "Video Understanding", "3D Reconstruction", "Concept Bottleneck Models",
         "Visual Representations", "Open-Vocabulary Detection", "Point Clouds", "Neural Radiance Fields"),
        ("Fine-Grained Recognition", "Visual-Concept Relations", "Autonomous Driving", "Medical Imaging",
         "Long-Tailed Recognition", "Domain Generalization", "Few-Shot Segmentation", "Image Editing"),
        ("Optimal Transport", "Contrastive Pre-Training", "Masked Autoencoding", "Token Merging",
         "Prompt Tuning", "Test-Time Adaptation", "Feature Pyramids", "Deformable Attention"),
        ("Edge GPUs", "Mobile Devices", "Embedded Systems"),
        ("ImageNet", "COCO", "ADE20K", "CUB-200", "Kinetics-400", "ScanNet"),
        ("ViT", "DETR", "Mask R-CNN", "CLIP", "SAM", "Stable Diffusion"),
        "computer vision",
    ),
    Field(
        "nlp",
        (("CL", 0.75), ("AI", 0.15), ("LG", 0.1)),
        ("Instruction Tuning", "Retrieval-Augmented Generation", "Chain-of-Thought Reasoning",
         "Hallucination Detection", "Text Embeddings", "Bidirectional Encoders", "Dialogue Systems",
         "Code Generation", "Machine Translation", "Tokenization", "Preference Optimization"),
        ("Multilingual Understanding", "Human Ability Evaluation", "Low-Resource Languages",
         "Long-Document Summarization", "Open-Domain Question Answering", "Information Retrieval",
         "Mathematical Reasoning", "Factual Consistency"),
        ("Matryoshka Representations", "Curriculum Learning", "Contrastive Decoding",
         "Self-Consistency", "Synthetic Data Generation", "Reward Modeling", "Elastic Expert Utilization"),
        ("Consumer GPUs", "CPU-Only Servers", "Mobile Devices"),
        ("MMLU", "GSM8K", "BEIR", "MTEB", "SQuAD", "XNLI", "TruthfulQA"),
        ("BERT", "RoBERTa", "LLaMA", "Qwen", "Mistral", "T5"),
        "natural language processing",
    ),
    Field(
        "recsys",
        (("IR", 0.7), ("LG", 0.2), ("AI", 0.1)),
        ("Recommender Systems", "Click-Through Rate Prediction", "Dense Retrieval",
         "Sequential Recommendation", "Embedding Tables", "Query Understanding", "User Modeling",
         "Multi-Task Ranking", "Feature Interactions", "Cold-Start Recommendation"),
        ("Online Advertising", "E-Commerce Search", "Industrial Recommendation", "Real-Time Serving",
         "Session-Based Recommendation", "Short-Video Platforms"),
        ("Graph Contrastive Learning", "Hashing", "Knowledge Distillation", "Mixture of Experts",
         "Generative Retrieval", "Negative Sampling", "Embedding Compression"),
        ("CPU Clusters", "Parameter Servers", "GPU Servers"),
        ("MovieLens", "Amazon Reviews", "Criteo", "Yelp", "MS MARCO"),
        ("DeepFM", "DCN", "SASRec", "BERT4Rec", "LightGCN"),
        "recommendation and information retrieval",
    ),
    Field(
        "theory",
        (("LG", 0.55), ("ML", 0.35), ("IT", 0.1)),
        ("Stochastic Gradient Descent", "Non-Convex Optimization", "Generalization Bounds", "Scaling Laws",
         "Residual Networks", "Implicit Regularization", "Kernel Methods", "Bayesian Optimization",
         "Distributed Optimization", "Test-Risk Guarantees", "Neural Tangent Kernels", "Depth Expansion"),
        ("Scaling Behavior", "Normalized Residual Networks", "Overparameterized Models",
         "Heavy-Tailed Noise", "Sublinear Speedup", "Sample Complexity", "Benign Overfitting"),
        ("Rademacher Complexity", "Mean-Field Analysis", "Variance Reduction", "Mirror Descent",
         "Stochastic Approximation", "PAC-Bayes Analysis", "Qualitative Mechanisms"),
        ("Parallel Machines", "Multi-GPU Systems"),
        ("CIFAR-10", "MNIST", "synthetic benchmarks"),
        ("SGD", "Adam", "SVRG", "LAMB"),
        "machine learning theory and optimization",
    ),
    Field(
        "agents",
        (("AI", 0.5), ("LG", 0.25), ("RO", 0.15), ("MA", 0.1)),
        ("Reinforcement Learning", "Multi-Agent Systems", "LLM Agents", "Offline Reinforcement Learning",
         "Robotic Manipulation", "Task Planning", "Reward Models", "World Models", "Tool Use"),
        ("Autonomous Exploration", "Embodied Navigation", "Long-Horizon Tasks", "Cooperative Games",
         "Sim-to-Real Transfer", "Web Automation"),
        ("Policy Distillation", "Hierarchical Planning", "Monte Carlo Tree Search", "Intrinsic Motivation",
         "Model-Based Rollouts", "Self-Play"),
        ("Real Robots", "Simulators", "Edge Devices"),
        ("MuJoCo", "Atari", "Habitat", "WebArena", "D4RL"),
        ("PPO", "SAC", "DreamerV3", "ReAct"),
        "reinforcement learning and autonomous agents",
    ),
    Field(
        "graphs",
        (("LG", 0.6), ("SI", 0.2), ("DB", 0.2)),
        ("Graph Neural Networks", "Knowledge Graphs", "Graph Partitioning", "Temporal Graphs",
         "Link Prediction", "Graph Sampling", "Graph Transformers", "Subgraph Matching"),
        ("Billion-Scale Graphs", "Molecular Property Prediction", "Fraud Detection", "Traffic Forecasting",
         "Community Detection", "Graph Databases"),
        ("Message Passing", "Spectral Filtering", "Neighbor Sampling", "Graph Rewiring",
         "Positional Encodings", "Mini-Batch Training"),
        ("GPU Clusters", "Multi-GPU Servers", "Distributed Memory Systems"),
        ("OGB", "Cora", "Reddit", "ogbn-papers100M", "QM9"),
        ("GCN", "GraphSAGE", "GAT", "DGL", "PyG"),
        "graph learning",
    ),
    Field(
        "architecture",
        (("AR", 0.45), ("PL", 0.2), ("PF", 0.2), ("DC", 0.15)),
        ("Deep Learning Compilers", "Operator Fusion", "Tensor Programs", "Accelerator Design",
         "Processing-in-Memory", "FPGA Accelerators", "Memory Hierarchies", "Sparse Tensor Cores",
         "Dataflow Architectures", "Systolic Arrays", "Kernel Autotuning"),
        ("Transformer Inference", "Sparse Workloads", "Energy-Efficient Training", "Edge AI",
         "Near-Data Processing", "Dynamic Shapes"),
        ("Polyhedral Optimization", "Cost Models", "Design Space Exploration", "Tiling",
         "Software Pipelining", "Bit-Serial Computation"),
        ("FPGAs", "ASICs", "Tensor Cores", "RISC-V Cores", "HBM Systems"),
        ("MLPerf", "PolyBench", "TVM benchmarks"),
        ("TVM", "XLA", "Triton", "Ansor", "TensorRT"),
        "computer architecture and compilers",
    ),
    Field(
        "reliability",
        (("CR", 0.4), ("LG", 0.3), ("SE", 0.2), ("AR", 0.1)),
        ("Adversarial Robustness", "Backdoor Attacks", "Differential Privacy", "Fault Tolerance",
         "Silent Data Corruption", "Single Event Transients", "Software Testing", "Membership Inference",
         "Soft Errors", "Model Watermarking"),
        ("Circuit-Level Simulation", "Safety-Critical Systems", "Large-Scale Training Jobs",
         "Deep Learning Frameworks", "Autonomous Vehicles", "Privacy-Preserving Inference"),
        ("Machine Learning Regression", "Fuzzing", "Certified Defenses", "Checkpoint Verification",
         "Anomaly Detection", "Error Injection", "Randomized Smoothing"),
        ("GPUs", "Bulk CMOS", "Embedded Processors", "Data Centers"),
        ("CIFAR-10", "ImageNet", "TCAD simulations", "production traces"),
        ("PGD", "TRADES", "DP-SGD", "AFL"),
        "reliability, security and privacy",
    ),
)

FIELD_INDEX = {f.key: i for i, f in enumerate(FIELDS)}

# Scholar Feed shows arXiv category suffixes; "ML" alone means stat.ML.
CATEGORY_FULL = {
    "LG": "cs.LG", "CL": "cs.CL", "CV": "cs.CV", "AI": "cs.AI", "DC": "cs.DC", "PF": "cs.PF",
    "IR": "cs.IR", "ML": "stat.ML", "NE": "cs.NE", "AR": "cs.AR", "SE": "cs.SE", "CR": "cs.CR",
    "RO": "cs.RO", "MA": "cs.MA", "DS": "cs.DS", "NI": "cs.NI", "PL": "cs.PL", "SI": "cs.SI",
    "MS": "cs.MS", "DB": "cs.DB", "IT": "cs.IT", "CE": "cs.CE",
}

ADJECTIVES = (
    "Fast", "Efficient", "Scalable", "Robust", "Adaptive", "Lossless", "Communication-Efficient",
    "Memory-Efficient", "Hardware-Aware", "Elastic", "Practical", "Accurate", "Lightweight", "Unified",
    "Fine-Grained", "Cost-Effective", "Training-Free", "Provable", "Stable", "Generalizable",
    "Energy-Efficient", "Low-Latency", "High-Throughput", "Fault-Tolerant", "Load-Balanced",
    "Topology-Aware", "Data-Driven", "Automated", "Flexible", "Principled", "Near-Optimal",
    "Parameter-Efficient", "Holistic", "Resource-Aware", "Cross-Layer", "End-to-End", "Modular",
    "Accelerated", "Trustworthy", "Interpretable", "Calibrated", "Compact", "Streaming",
)

# Words that flip meaning while leaving the title almost unchanged: near-twin titles of different
# papers (the two HONPAS papers: "dynamic ... algorithm" / "static ... algorithms").
TWIN_PAIRS = (
    ("Dynamic", "Static"), ("Online", "Offline"), ("Synchronous", "Asynchronous"), ("Sparse", "Dense"),
    ("Supervised", "Unsupervised"), ("Local", "Global"), ("Centralized", "Decentralized"),
    ("Homogeneous", "Heterogeneous"), ("Structured", "Unstructured"), ("Explicit", "Implicit"),
    ("Linear", "Nonlinear"), ("Lossless", "Lossy"), ("Single-Node", "Multi-Node"),
    ("Intra-Node", "Inter-Node"), ("Forward", "Backward"), ("First-Order", "Second-Order"),
    ("Shared-Memory", "Distributed-Memory"), ("Spatial", "Temporal"), ("Weak", "Strong"),
    ("Data-Parallel", "Model-Parallel"), ("Deterministic", "Stochastic"), ("Coarse-Grained", "Fine-Grained"),
)
TWIN_SWAP = {a: b for a, b in TWIN_PAIRS} | {b: a for a, b in TWIN_PAIRS}
TWIN_SWAP.update({k.lower(): v.lower() for k, v in list(TWIN_SWAP.items())})

# Head nouns whose number changes together with a twin word ("algorithm" -> "algorithms").
PLURALS = {
    "algorithm": "algorithms", "method": "methods", "scheme": "schemes", "model": "models",
    "framework": "frameworks", "strategy": "strategies", "approach": "approaches", "kernel": "kernels",
    "system": "systems", "policy": "policies", "estimator": "estimators", "schedule": "schedules",
    "partitioner": "partitioners", "technique": "techniques", "protocol": "protocols", "bound": "bounds",
}
PLURALS.update({k.capitalize(): v.capitalize() for k, v in list(PLURALS.items())})
SINGULARS = {v: k for k, v in PLURALS.items()}

GERUNDS = (
    "Rethinking", "Exploiting", "Revisiting", "Scaling", "Accelerating", "Understanding", "Taming",
    "Benchmarking", "Characterizing", "Optimizing", "Democratizing", "Unlocking", "Compressing",
    "Recycling", "Unfolding", "Harnessing", "Stabilizing", "Simplifying", "Disentangling",
)
HEADS = (
    "Framework", "System", "Method", "Approach", "Algorithm", "Benchmark Suite", "Runtime", "Library",
    "Scheduler", "Compiler", "Toolkit", "Engine", "Architecture", "Strategy", "Analysis",
)
CONCEPTS = (
    "Graph Coloring", "Optimal Transport", "a Knapsack Problem", "Sequence Modeling", "Game Theory",
    "Signal Processing", "Rate-Distortion Theory", "Control Theory", "Integer Programming",
    "Symmetry Breaking", "Curriculum Design", "Information Bottlenecks",
)
ACRONYM_PREFIXES = (
    "Dyna", "Flash", "Mega", "Turbo", "Hydra", "Sigma", "Atom", "Quant", "Sparse", "Deep", "Fed", "Edge",
    "Hyper", "Zero", "Pipe", "Tensor", "Graph", "Meta", "Omni", "Nano", "Swift", "Astra", "Nova",
    "Orion", "Lumen", "Vega", "Helix", "Prism", "Flux", "Echo", "Tera", "Exa", "Chrono", "Poly",
    "Auto", "Smart", "Neuro", "Cyber", "Ultra", "Micro", "Aero", "Terra", "Cosmo", "Lynx", "Kite",
)
ACRONYM_SUFFIXES = (
    "Train", "Serve", "Attn", "Quant", "Flow", "Scale", "Shard", "Bench", "World", "Opt", "Fuse",
    "Net", "Former", "Mix", "Cache", "Route", "Tune", "Sched", "Pipe", "Comm", "Store", "Sim",
    "Grad", "Prune", "Mind", "Spec", "Lens", "Core", "Stream", "Loom", "Forge", "Pilot", "Guard",
)
HARDWARE_PREFIX = ("cu", "hip", "sw", "x", "m3", "q", "e")

# Abbreviation <-> expansion, used for title variants between listings of the same paper.
ABBREVIATIONS = (
    ("LLMs", "Large Language Models"), ("LLM", "Large Language Model"), ("MoE", "Mixture-of-Experts"),
    ("GNNs", "Graph Neural Networks"), ("GNN", "Graph Neural Network"), ("DNNs", "Deep Neural Networks"),
    ("DNN", "Deep Neural Network"), ("RL", "Reinforcement Learning"), ("HPC", "High-Performance Computing"),
    ("ViTs", "Vision Transformers"), ("ViT", "Vision Transformer"), ("PTQ", "Post-Training Quantization"),
    ("FL", "Federated Learning"), ("NAS", "Neural Architecture Search"), ("SGD", "Stochastic Gradient Descent"),
    ("RAG", "Retrieval-Augmented Generation"), ("SpMV", "Sparse Matrix-Vector Multiplication"),
    ("CTR", "Click-Through Rate"), ("KV", "Key-Value"),
)
ABBREV_RE = [(re.compile(r"(?<![\w-])" + re.escape(a) + r"(?![\w-])"), a, e) for a, e in ABBREVIATIONS]
EXPAND_RE = [(re.compile(r"(?<![\w-])" + re.escape(e) + r"(?![\w-])"), a, e) for a, e in ABBREVIATIONS]

# Math in titles: (as written on arXiv in LaTeX, as a site renders it).
LATEX_TITLE_TERMS = (
    (r"$k$-Nearest Neighbor", "k-Nearest Neighbor"), (r"$\ell_1$-Regularized", "ℓ1-Regularized"),
    (r"$\mathcal{O}(1)$-Memory", "O(1)-Memory"), (r"$\epsilon$-Differentially Private", "ε-Differentially Private"),
    (r"$N$-Body", "N-Body"), (r"$\alpha$-Entmax", "α-Entmax"), (r"$\sqrt{n}$-Consistent", "√n-Consistent"),
    (r"$k$-Means", "k-Means"), (r"$\mathbb{Z}_2$-Equivariant", "Z2-Equivariant"), (r"$\delta$-Robust", "δ-Robust"),
)

VENUES_CONFERENCE = (
    "NeurIPS", "ICML", "ICLR", "AAAI", "IJCAI", "ACL", "EMNLP", "CVPR", "ICCV", "ECCV", "KDD", "SIGIR",
    "WWW", "SC", "PPoPP", "HPDC", "ICS", "IPDPS", "EuroSys", "OSDI", "MLSys", "ASPLOS", "ISCA", "MICRO",
)
VENUES_JOURNAL = (
    "IEEE Transactions on Parallel and Distributed Systems", "Journal of Machine Learning Research",
    "Neural Networks", "Future Generation Computer Systems", "IEEE Transactions on Computers",
    "Pattern Recognition", "ACM Computing Surveys", "Journal of Parallel and Distributed Computing",
    "Transactions on Machine Learning Research", "Journal of Chemical Theory and Computation",
)
GITHUB_ORGS = (
    "intelligent-machine-learning", "thu-pacman", "hpcgroup", "mlsys-lab", "openmmlab", "sjtu-epcc",
    "pku-efficient-ai", "ict-hpc", "nus-hpc-ai-lab", "ustc-adsl", "zju-ml", "fudan-nlp", "cmu-catalyst",
    "mit-han-lab", "stanford-futuredata", "uw-sampl", "epfml", "ethz-spcl", "kaist-ina", "tum-i5",
)


# --------------------------------------------------------------------------------------------
# Abstract sentences by rhetorical role. @M@ method name, @OBJ@/@TASK@/@TECH@ phrases (lower
# case), @HW@ hardware, @DATA@/@DATA2@ datasets, @BASE@ baseline, @DOMAIN@ field, numbers:
# @X@ speed-up, @P@ / @Q@ percentages, @K@ a count, @B@ model size.
# --------------------------------------------------------------------------------------------
ROLE_CONTEXT = (
    "Research on @OBJ@ has become a central part of modern @DOMAIN@, yet its cost keeps growing with model and data size.",
    "Recent progress in @DOMAIN@ has been driven by ever larger models, which makes @TASK@ both more important and more expensive.",
    "Efficient support for @TASK@ is a key requirement for deploying modern models in production, where latency, cost and reliability all matter.",
    "As workloads in @DOMAIN@ scale to thousands of accelerators, the cost of @OBJ@ increasingly dominates the end-to-end time.",
    "In recent years, with the trend of applying deep learning to @DOMAIN@, the unique characteristics of emerging workloads raise great challenges for @TASK@.",
    "The scaling behavior of @OBJ@, in which performance improves as resources increase, is a central empirical phenomenon, yet its basis remains poorly understood.",
    "Many practical applications of @DOMAIN@ require @TASK@ under tight memory and bandwidth budgets.",
    "Techniques for @OBJ@ are widely used in @DOMAIN@ because of their flexibility, but they remain difficult to tune for @TASK@.",
    "The conventional approach to @TASK@ is increasingly constrained by cost, latency, personalization and privacy concerns.",
    "Modern @DOMAIN@ pipelines are inherently dynamic: resource fluctuations and shifting workloads continually reshape the optimal configuration for @TASK@.",
    "With the rapid growth of @OBJ@, efficient @TASK@ has become a practical necessity rather than an optimization.",
    "Running @TASK@ on @HW@ is attractive because of its low cost, but it is constrained by limited memory capacity and bandwidth.",
)
ROLE_PROBLEM = (
    "However, existing methods for @TASK@ either require costly retraining or suffer from a severe accuracy drop at high compression ratios.",
    "Existing approaches rely heavily on manual tuning and expert heuristics, and they fail to adapt when the workload changes.",
    "Unfortunately, state-of-the-art systems such as @BASE@ are built around a static execution model and cannot react to runtime changes.",
    "Prior work on @OBJ@ has focused on small-scale settings, leaving the behavior at @HW@ scale largely unexplored.",
    "In particular, we observe that @OBJ@ can account for up to @P@ of the total time in representative workloads.",
    "These methods overlook the substantial differences among layers, applying a uniform strategy where a heterogeneous one is needed.",
    "Moreover, the configuration space grows exponentially, making exhaustive search computationally infeasible.",
    "The main obstacle is that communication, memory and computation must be balanced jointly, which existing schedulers do not attempt.",
    "Despite considerable progress, a principled analysis explaining when @TECH@ helps is still missing.",
    "As a result, practitioners face a dilemma between accuracy and efficiency when applying @OBJ@ to @TASK@.",
    "This raises a natural question: can @TASK@ be made both fast and accurate without modifying the model architecture?",
)
ROLE_PROPOSE_NAMED = (
    "In this paper, we propose @M@, @A_ADJ@ framework for @TASK@ based on @TECH@.",
    "We present @M@, a system that makes @TASK@ practical on @HW@ through @TECH@.",
    "To address these limitations, we introduce @M@, which combines @TECH@ with a lightweight runtime for @OBJ@.",
    "To tackle these issues, we propose @M@, @A_ADJ@ method that learns to adapt @OBJ@ to each input during @TASK@.",
    "We develop @M@, a co-designed algorithm and system stack for @TASK@ on @HW@.",
    "This work presents \\textsc{@M@}, a plug-and-play approach to @TASK@ that requires no retraining.",
)
ROLE_PROPOSE_EXPANDED = (
    "To address this, we propose @M@ (@EXP@), a staged framework for @TASK@.",
    "We propose @M@ (@EXP@)a fine-tuning-free, plug-and-play framework for @TASK@.",
    "In this work, we introduce @M@ (@EXP@), @A_ADJ@ approach that exploits @TECH@ for @OBJ@.",
    "We present @M@ (@EXP@), which reformulates @TASK@ as a problem of @TECH@.",
)
ROLE_PROPOSE_UNNAMED = (
    "In this paper, we propose @A_ADJ@ approach to @TASK@ based on @TECH@.",
    "We develop a unified framework that decomposes @TASK@ into representational, optimization and generalization components.",
    "This study provides a methodology for @TASK@ that relies on @TECH@ rather than hand-crafted rules.",
    "We recast @OBJ@ from a new perspective and derive a principled procedure for @TASK@.",
    "In this work, we study @OBJ@ for @TASK@ and show how @TECH@ can be used to make it @ADJ_LOW@.",
)
ROLE_METHOD = (
    "At its core, @M@ relies on an abstraction that unifies all distributed states under one logical coordinate space.",
    "Specifically, @M@ decomposes the model into multiple submodels that are trained independently and merged afterwards.",
    "We further implement an efficient custom CUDA kernel, ensuring seamless integration with existing inference frameworks.",
    "A cost model guides the search, and a memory-aware, deadlock-free schedule overlaps communication with computation.",
    "@M@ independently evaluates candidate strategies for each layer and selects the best one using @TECH@.",
    "We theoretically show that the procedure converges at a rate of $\\mathcal{O}(1/\\sqrt{T})$ under standard assumptions.",
    "The key idea is to exploit the structure of @OBJ@ so that most of the work can be done in parallel without synchronization.",
    "With a straight-through estimator and an auxiliary regularization loss, @M@ induces sparsity through end-to-end training.",
    "To determine the configuration, we propose a second-order criterion based on Taylor expansion and the Hessian spectrum.",
    "In addition, a pseudo gradient penalty suppresses loss spikes, which ensures stability and improves final quality.",
    "We design the system around three tightly coupled layers: algorithm, runtime and hardware mapping.",
    "Each component can be enabled independently, which makes @M@ easy to adopt in existing pipelines.",
    "We also provide a fully asynchronous variant that accommodates heterogeneous clusters with stragglers.",
    "Unlike prior work, our analysis covers both the \\textbf{L}oss landscape and the generalization gap.",
    "The framework introduces a light-weight proxy model that mimics the expensive component and can be offloaded to @HW@.",
    "Finally, an adaptive scheduler reassigns work at runtime to keep all devices busy.",
)
ROLE_RESULT = (
    "Experiments show that @M@ outperforms @BASE@ by up to @X@ while preserving accuracy.",
    "On @DATA@ and @DATA2@, our method reduces memory usage by @P@ with less than @Q@ accuracy loss.",
    "Extensive experiments on @HW@ demonstrate a speedup of @X@ over state-of-the-art systems.",
    "@M@ reconfigures a @B@ model in under @K@ seconds, outperforming checkpoint-based approaches by orders of magnitude.",
    "Evaluated on @K@ representative workloads, it retains over @P@ of the original model's performance.",
    "Our evaluation on up to @K@ GPUs shows @P@ parallel efficiency in strong scaling tests.",
    "Results on @DATA@ show consistent improvements over @BASE@ in both perplexity and downstream accuracy.",
    "It achieves up to @X@ faster decoding and @Q@ higher throughput on @HW@.",
    "Compared with @BASE@, training cost is reduced by @P@ on @DATA@ across different model sizes.",
    "Empirically, the bounds are tight on @DATA@ and predict the observed behavior across @K@ settings.",
    "These capabilities are sustained across @K@ leadership systems, reaching @P@ of peak FP64 performance.",
    "For example, 4-bit quantization of a @B@ model reaches @P@ accuracy, surpassing the full-precision baseline.",
)
ROLE_CONCLUSION = (
    "Together, these results provide a practical path toward @ADJ_LOW@ @TASK@.",
    "We believe @M@ opens up new opportunities for @DOMAIN@ at scale.",
    "More broadly, our findings suggest that @OBJ@ should be co-designed with the hardware they run on.",
    "The analysis also explains several empirical observations reported in prior work on @OBJ@.",
    "These results establish @M@ as a robust solution for @TASK@ in diverse computational ecosystems.",
)
ROLE_CODE = (
    "The code is available at https://github.com/@ORG@/@REPO@.",
    "Code is publicly available at https://github.com/@ORG@/@REPO@.",
    "Our implementation is open-sourced at \\url{https://github.com/@ORG@/@REPO@}.",
    "The source code will be released at https://github.com/@ORG@/@REPO@",
)

# Role order in an abstract and how many sentences each role may take (min, max).
ROLE_LAYOUT = (("context", 1, 2), ("problem", 1, 2), ("propose", 1, 1), ("method", 1, 4),
               ("result", 1, 3), ("conclusion", 0, 1))
ROLE_BANKS = {
    "context": ROLE_CONTEXT, "problem": ROLE_PROBLEM, "method": ROLE_METHOD,
    "result": ROLE_RESULT, "conclusion": ROLE_CONCLUSION,
}

# Typical rendered length of each slot, used to size abstracts (600-1900 characters) before rendering.
SLOT_LENGTH = {
    "@M@": 9, "@MC@": 9, "@EXP@": 38, "@A_ADJ@": 14, "@OBJ@": 24, "@OBJ_CAP@": 24, "@TASK@": 24, "@TASK_CAP@": 24, "@TECH@": 24,
    "@HW@": 16, "@DATA@": 8, "@DATA2@": 8, "@BASE@": 8, "@DOMAIN@": 30, "@X@": 5, "@P@": 5, "@Q@": 5,
    "@K@": 3, "@B@": 4, "@ADJ@": 12, "@ADJ_AN@": 12, "@ADJ_LOW@": 12, "@ORG@": 12, "@REPO@": 10,
}
_SLOT_RE = re.compile(r"@[A-Z0-9_]+@")


# Slot order of the str.format patterns made by format_template (renderers pass values in this order).
SLOT_ORDER = ("@M@", "@MC@", "@EXP@", "@OBJ@", "@OBJ_CAP@", "@TASK@", "@TASK_CAP@", "@TECH@", "@HW@", "@DATA@",
              "@DATA2@", "@BASE@", "@DOMAIN@", "@ADJ@", "@ADJ_AN@", "@ADJ_LOW@", "@A_ADJ@", "@X@", "@P@", "@Q@",
              "@K@", "@B@", "@ORG@", "@REPO@")
_SLOT_POS = {slot: i for i, slot in enumerate(SLOT_ORDER)}


def format_template(template: str) -> str:
    """``we propose @M@ ({EXP})`` -> a ``str.format`` pattern over SLOT_ORDER; literal braces doubled."""
    escaped = template.replace("{", "{{").replace("}", "}}")
    return _SLOT_RE.sub(lambda m: "{%d}" % _SLOT_POS[m.group(0)], escaped)


def estimated_length(template: str) -> int:
    """Rendered length of a sentence template, counting each slot at its typical fill length."""
    return len(_SLOT_RE.sub("", template)) + sum(SLOT_LENGTH.get(s, 8) for s in _SLOT_RE.findall(template))


@functools.lru_cache(maxsize=4096)
def lower_phrase(phrase: str) -> str:
    """Title Case phrase -> running-text case, keeping acronyms and mixed-case words.

    ``Large-Scale Pre-Training`` -> ``large-scale pre-training``; ``Elastic LLM Training`` ->
    ``elastic LLM training``; ``MoE`` stays ``MoE``.
    """
    words = []
    for word in phrase.split(" "):
        parts = word.split("-")
        parts = [p.lower() if (len(p) > 1 and p[0].isupper() and p[1:].islower()) else p for p in parts]
        words.append("-".join(parts))
    return " ".join(words)


def sentence_case(title: str) -> str:
    """Title Case -> sentence case, as some sites show titles; acronyms and coined names survive."""
    out = []
    capital_next = True
    for word in title.split(" "):
        if capital_next:
            out.append(word)
        else:
            out.append(lower_phrase(word))
        capital_next = word.endswith(":") or word.endswith("?")
    return " ".join(out)


_SMALL_WORDS = frozenset("a an and as at by for from in into of on or over the to under via with without vs".split())


def title_case(title: str) -> str:
    """sentence case -> Title Case (small words stay lower unless first)."""
    out = []
    for i, word in enumerate(title.split(" ")):
        if i > 0 and word in _SMALL_WORDS:
            out.append(word)
        elif word[:1].islower() and not any(ch.isupper() for ch in word[1:]) and not word.startswith("$"):
            out.append("-".join(p[:1].upper() + p[1:] for p in word.split("-")))
        else:
            out.append(word)
    return " ".join(out)
