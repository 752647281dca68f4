"""What the reproduction is set against: the paper's method, validity, data files, regions and published values.

Copied from ../shared/paper/FLEX_paper.tex; nothing here runs or writes anything.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ACCIDENT_REGIONS", "DATA_FILES", "PAPER", "PAPER_GENERATOR", "PAPER_VALIDITY", "RARE_CHANGE"]

#: The method the paper used (DiCE random); the project's DEFAULT_GENERATOR is run beside it when it differs.
#: It does not reproduce the paper's counterfactuals: on accidents no DiCE random setting tried changes more
#: than two features in about 30% of counterfactuals, as the paper's did.
PAPER_GENERATOR = "dice-random"
#: The paper's validity: P(undesirable) < 0.5, no margin and no neighbourhood (see counterfactuals._validity).
PAPER_VALIDITY = {"margin": 0.0, "radius": 0.0}
#: A mean change frequency below this counts as rare in the findings (under 2 % of counterfactuals).
RARE_CHANGE = 0.02
DATA_FILES = {"accidents": "RTA_Dataset.csv", "loan": "loan_approval_dataset.csv"}
#: The paper's four contrastive accident regions (Fig. 3), in its order.
ACCIDENT_REGIONS = (
    ("Driving_experience", "Above 10yr"),
    ("Driving_experience", "Below 1yr"),
    ("Weather_conditions", "Raining"),
    ("Weather_conditions", "Normal"),
)

#: Published values, copied from ../shared/paper/FLEX_paper.tex.
PAPER: dict[str, Any] = {
    "metrics": {
        "accidents": {"cv_accuracy_mean": 0.8344, "cv_accuracy_std": 0.0053, "cv_f1_mean": 0.7860,
                      "cv_f1_std": 0.0055, "test_accuracy": 0.8347, "test_f1": 0.7894},
        "loan": {"test_accuracy": 0.9813, "test_f1": 0.9813},
    },
    # Table 1 and Table 3: feature -> (FLEX rank, F mean, F std, SHAP rank, mean |SHAP|).
    "global": {
        "accidents": {
            "Driving_experience": (1, 0.34, 0.24, 3, 0.0224),
            "Cause_of_accident": (2, 0.33, 0.23, 2, 0.0267),
            "Types_of_Junction": (3, 0.29, 0.24, 1, 0.0277),
            "Type_of_collision": (4, 0.28, 0.22, 6, 0.0144),
            "Vehicle_movement": (5, 0.23, 0.22, 4, 0.0177),
            "Weather_conditions": (6, 0.22, 0.22, 7, 0.0107),
            "Pedestrian_movement": (7, 0.22, 0.17, 9, 0.0035),
            "Light_conditions": (8, 0.20, 0.21, 5, 0.0169),
            "Road_surface_type": (9, 0.10, 0.13, 8, 0.0040),
        },
        "loan": {
            "cibil_score": (1, 0.76, 0.24, 1, 0.4053),
            "loan_term": (2, 0.20, 0.18, 2, 0.0522),
            "loan_amount": (3, 0.16, 0.19, 3, 0.0142),
            "luxury_assets_value": (4, 0.08, 0.12, 5, 0.0065),
            "bank_asset_value": (4, 0.08, 0.12, 8, 0.0046),
            "no_of_dependents": (4, 0.08, 0.10, 9, 0.0027),
            "income_annum": (7, 0.06, 0.11, 4, 0.0109),
            "commercial_assets_value": (8, 0.05, 0.12, 7, 0.0051),
            "education": (8, 0.05, 0.11, 10, 0.0027),
            "residential_assets_value": (10, 0.04, 0.08, 6, 0.0058),
            "self_employed": (11, 0.03, 0.07, 11, 0.0022),
        },
    },
    # Table 2 (region 1): feature -> (factual mode, mode share among factuals, share among CFs, δ).
    "mode_shift_region_1": {
        "Driving_experience": ("Above 10yr", 1.00, 0.58, -0.42),
        "Types_of_Junction": ("Crossing", 1.00, 0.56, -0.44),
        "Road_surface_type": ("Asphalt roads", 1.00, 0.88, -0.12),
        "Light_conditions": ("Darkness -- lights lit", 0.80, 0.48, -0.40),
        "Weather_conditions": ("Normal", 1.00, 0.86, -0.14),
        "Type_of_collision": ("Vehicle with vehicle collision", 1.00, 0.50, -0.50),
        "Vehicle_movement": ("Turnover", 0.60, 0.14, -0.77),
        "Pedestrian_movement": ("Not a Pedestrian", 1.00, 0.70, -0.30),
        "Cause_of_accident": ("No distancing", 0.40, 0.36, -0.10),
    },
    # Fig. 4 captions; regions 3 and 4 only appear in a commented-out part of the .tex.
    "pearson_r": {1: 0.35, 2: 0.50, 3: 0.33, 4: 0.66},
    "pearson_r_commented_out": (3, 4),
    # "1460 instances of 2000, 70.3%": the stated share; the counts give 73.0%.
    "share_of_cfs_changing_at_most_two_features": 0.703,
    "cfs_changing_at_most_two_features": (1460, 2000),
}
