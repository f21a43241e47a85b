// Node classes the host application ships itself (its base nodes and its bundled extras): a workflow
// that uses them needs no pack. A class not listed here that no pack defines is reported as unknown,
// never wrongly as core; a UI-format workflow also marks its core nodes itself (node-types.ts).
export const CORE_CLASSES: ReadonlySet<string> = new Set([
  // sampling
  'KSampler', 'KSamplerAdvanced', 'SamplerCustom', 'SamplerCustomAdvanced', 'BasicScheduler', 'KSamplerSelect',
  'RandomNoise', 'DisableNoise', 'BasicGuider', 'CFGGuider', 'DualCFGGuider', 'SplitSigmas', 'FlipSigmas',
  // loaders
  'CheckpointLoaderSimple', 'CheckpointLoader', 'DiffusersLoader', 'unCLIPCheckpointLoader', 'VAELoader', 'LoraLoader',
  'LoraLoaderModelOnly', 'CLIPLoader', 'DualCLIPLoader', 'TripleCLIPLoader', 'UNETLoader', 'ControlNetLoader',
  'DiffControlNetLoader', 'StyleModelLoader', 'CLIPVisionLoader', 'GLIGENLoader', 'UpscaleModelLoader', 'HypernetworkLoader',
  'ImageOnlyCheckpointLoader',
  // conditioning
  'CLIPTextEncode', 'CLIPSetLastLayer', 'ConditioningAverage', 'ConditioningCombine', 'ConditioningConcat',
  'ConditioningSetArea', 'ConditioningSetAreaPercentage', 'ConditioningSetMask', 'ConditioningSetTimestepRange',
  'ConditioningZeroOut', 'ControlNetApply', 'ControlNetApplyAdvanced', 'CLIPVisionEncode', 'StyleModelApply',
  'unCLIPConditioning', 'GLIGENTextBoxApply', 'InpaintModelConditioning', 'FluxGuidance', 'CLIPTextEncodeSDXL',
  'CLIPTextEncodeSDXLRefiner', 'CLIPTextEncodeFlux', 'CLIPTextEncodeSD3',
  // latents
  'EmptyLatentImage', 'EmptySD3LatentImage', 'LatentUpscale', 'LatentUpscaleBy', 'LatentComposite', 'LatentBlend',
  'LatentFromBatch', 'RepeatLatentBatch', 'LatentRotate', 'LatentFlip', 'LatentCrop', 'SetLatentNoiseMask',
  'VAEDecode', 'VAEEncode', 'VAEEncodeForInpaint', 'VAEDecodeTiled', 'VAEEncodeTiled',
  // images and masks
  'SaveImage', 'PreviewImage', 'LoadImage', 'LoadImageMask', 'ImageScale', 'ImageScaleBy', 'ImageScaleToTotalPixels',
  'ImageInvert', 'ImageBatch', 'ImagePadForOutpaint', 'ImageCrop', 'ImageBlend', 'ImageBlur', 'ImageSharpen',
  'ImageUpscaleWithModel', 'ImageToMask', 'MaskToImage', 'SolidMask', 'InvertMask', 'CropMask', 'MaskComposite',
  'FeatherMask', 'GrowMask', 'ThresholdMask', 'EmptyImage', 'SaveAnimatedWEBP', 'SaveAnimatedPNG',
  // models
  'ModelSamplingDiscrete', 'ModelSamplingContinuousEDM', 'ModelSamplingSD3', 'ModelSamplingFlux', 'ModelMergeSimple',
  'ModelMergeBlocks', 'CLIPMergeSimple', 'CheckpointSave', 'FreeU', 'FreeU_V2', 'HyperTile', 'PatchModelAddDownscale',
  'RescaleCFG', 'SelfAttentionGuidance', 'PerturbedAttentionGuidance', 'ConditioningSetAreaStrength',
  // video and misc
  'SVD_img2vid_Conditioning', 'VideoLinearCFGGuidance', 'LoadAudio', 'SaveAudio', 'PreviewAudio', 'EmptyLatentAudio',
  'VAEEncodeAudio', 'VAEDecodeAudio', 'Canny', 'LoadLatent', 'SaveLatent',
]);
