// Auto-generated from instances.vantage.sh data
// Last updated: 2026-08-26

var instanceData = [
  {
    "name": "g7.12xlarge",
    "apiName": "g7.12xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 2,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 48,
    "memory": "192 GB",
    "network": "175 Gigabit",
    "storage": "1900 GB SSD",
    "pricing": {
      "eu-south-2": {
        "onDemand": 7.48474
      },
      "us-east-1": {
        "onDemand": 7.12832
      },
      "us-east-2": {
        "onDemand": 7.12832
      },
      "us-west-2": {
        "onDemand": 7.12832
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  },
  {
    "name": "g7.24xlarge",
    "apiName": "g7.24xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 4,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 96,
    "memory": "384 GB",
    "network": "350 Gigabit",
    "storage": "3800 GB SSD",
    "pricing": {
      "eu-south-2": {
        "onDemand": 14.96947
      },
      "us-east-1": {
        "onDemand": 14.25664
      },
      "us-east-2": {
        "onDemand": 14.25664
      },
      "us-west-2": {
        "onDemand": 14.25664
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  },
  {
    "name": "g7.2xlarge",
    "apiName": "g7.2xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 1,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 8,
    "memory": "32 GB",
    "network": "Up to 60 Gigabit",
    "storage": "440 GB SSD",
    "pricing": {
      "eu-south-2": {
        "onDemand": 2.646
      },
      "us-east-1": {
        "onDemand": 2.52
      },
      "us-east-2": {
        "onDemand": 2.52
      },
      "us-west-2": {
        "onDemand": 2.52
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  },
  {
    "name": "g7.48xlarge",
    "apiName": "g7.48xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 8,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 192,
    "memory": "768 GB",
    "network": "700 Gigabit",
    "storage": "3800 GB (2 × 1900 GB SSD)",
    "pricing": {
      "eu-south-2": {
        "onDemand": 29.93894
      },
      "us-east-1": {
        "onDemand": 28.51328
      },
      "us-east-2": {
        "onDemand": 28.51328
      },
      "us-west-2": {
        "onDemand": 28.51328
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  },
  {
    "name": "g7.4xlarge",
    "apiName": "g7.4xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 1,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 16,
    "memory": "64 GB",
    "network": "Up to 100 Gigabit",
    "storage": "875 GB SSD",
    "pricing": {
      "eu-south-2": {
        "onDemand": 3.19418
      },
      "us-east-1": {
        "onDemand": 3.04208
      },
      "us-east-2": {
        "onDemand": 3.04208
      },
      "us-west-2": {
        "onDemand": 3.04208
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  },
  {
    "name": "g7.8xlarge",
    "apiName": "g7.8xlarge",
    "gpu": "NVIDIA RTX PRO 4500 Blackwell",
    "gpuCount": 1,
    "gpuMemory": "32 GB GDDR7",
    "vcpu": 32,
    "memory": "128 GB",
    "network": "100 Gigabit",
    "storage": "930 GB SSD",
    "pricing": {
      "eu-south-2": {
        "onDemand": 4.29055
      },
      "us-east-1": {
        "onDemand": 4.08624
      },
      "us-east-2": {
        "onDemand": 4.08624
      },
      "us-west-2": {
        "onDemand": 4.08624
      }
    },
    "availability": [
      "eu-south-2",
      "us-east-1",
      "us-east-2",
      "us-west-2"
    ],
    "generation": "current",
    "family": "GPU instance"
  }
];
